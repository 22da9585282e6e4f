// The flight recorder's dump on failure: each diagnosing rank's whole recorder under
// "calls/recorder/<rank>", gathered and written by the lowest one.
#include "core/calls/failure_dump.hpp"

#include <cstdio>

#include "core/calls/trace_dump.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {
std::string recorder_key(int rank) { return "calls/recorder/" + std::to_string(rank); }
}  // namespace

void share_recorder(const GroupSite& site, std::chrono::milliseconds budget) {
  CallLog& log = *site.log;
  if (!log.store || call_trace_path().empty()) return;
  try {
    log.store->set(recorder_key(site.me),
                   encode_records(log.recorder.last(log.recorder.capacity())), budget);
  } catch (const dist::Error&) {  // the dump goes without this rank's calls
  }
}

void write_failure_dump(const GroupSite& site, const std::vector<int>& present,
                        const std::vector<int>& absent,
                        const std::vector<std::vector<CallRecord>>& published,
                        std::chrono::milliseconds budget) {
  CallLog& log = *site.log;
  const std::string path = call_trace_path();
  if (!log.store || path.empty() || present.empty() || present.front() != site.me) return;
  std::vector<RankRecords> ranks;
  for (const int r : present) {
    if (r == site.me) {
      ranks.push_back({r, log.recorder.last(log.recorder.capacity())});
      continue;
    }
    try {
      ranks.push_back({r, decode_records(log.store->get(recorder_key(r), budget))});
    } catch (const dist::Error&) {  // its recorder never came: its track is left out
    }
  }
  for (std::size_t i = 0; i < absent.size() && i < published.size(); ++i)
    ranks.push_back({absent[i], published[i]});
  try {
    write_call_trace(path, ranks);
    std::fprintf(stderr, "dist: the flight recorder of %zu rank(s) is in %s\n", ranks.size(),
                 path.c_str());
  } catch (const dist::Error& e) {
    std::fprintf(stderr, "dist: %s\n", e.what());
  }
}

}  // namespace dist::core
