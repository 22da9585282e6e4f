// Chrome-trace JSON (nlohmann::json) for sim's trace and the flight recorder's dump, and the dump's
// atomic write (a temporary file in the same directory, renamed over the path).
#include "core/calls/trace_dump.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <limits>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/init/rendezvous.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {

nlohmann::json slice(const TraceSlice& r) {
  nlohmann::json args = {{"call", r.call},
                         {"group", r.group},
                         {"seq", r.seq},
                         {"bytes", r.bytes},
                         {"outcome", r.outcome}};
  if (!r.state.empty()) args["state"] = r.state;
  return {{"name", r.kind},
          {"cat", r.flow || r.p2p ? "p2p" : "collective"},
          {"ph", "X"},
          {"ts", r.start_us},
          {"dur", std::max(r.end_us - r.start_us, 0.0)},
          {"pid", 0},
          {"tid", r.rank},
          {"args", std::move(args)}};
}

// A flow arrow from the send's slice to the recv's slice.
nlohmann::json flow_point(const TraceSlice& r) {
  nlohmann::json e = {{"name", "p2p"}, {"cat", "p2p"}, {"id", r.flow}, {"pid", 0}, {"tid", r.rank}};
  e["ph"] = r.flow_start ? "s" : "f";
  e["ts"] = r.flow_start ? r.start_us : r.end_us;
  if (!r.flow_start) e["bp"] = "e";
  return e;
}

std::string outcome_of(CallState state) {
  switch (state) {
    case CallState::completed: return "ok";
    case CallState::failed: return "failed";
    case CallState::posted: break;
  }
  return "never completed";
}

// The slices of every rank's records, times from the earliest post; a posted call ends at the
// latest time any record shows.
std::vector<TraceSlice> slices_of(const std::vector<RankRecords>& ranks) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = 0;
  for (const auto& rank : ranks)
    for (const auto& r : rank.records) {
      first = std::min(first, r.posted_us);
      last = std::max({last, r.posted_us, r.ended_us});
    }
  std::vector<TraceSlice> slices;
  for (const auto& rank : ranks)
    for (const auto& r : rank.records) {
      TraceSlice s;
      s.rank = rank.rank;
      s.group = r.group;
      s.seq = r.seq;
      s.kind = std::string(to_string(r.call.kind));
      s.call = describe(r.call);
      s.bytes = static_cast<std::size_t>(r.call.count) * dtype_size(r.call.dtype);
      s.start_us = static_cast<double>(r.posted_us - first);
      const std::int64_t end = r.state == CallState::posted ? last : r.ended_us;
      s.end_us = static_cast<double>(std::max(end, r.posted_us) - first);
      s.p2p = is_p2p(r.call.kind);
      s.outcome = outcome_of(r.state);
      s.state = std::string(to_string(r.state));
      slices.push_back(std::move(s));
    }
  return slices;
}

[[noreturn]] void cannot_write(const std::string& path, int error) {
  throw InvalidArgument("flight recorder: cannot write the trace to '" + path +
                        "': " + std::generic_category().message(error));
}

// Writes `text` to a new file beside `path` and renames it over `path`.
void write_atomically(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  const std::string temp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) cannot_write(path, errno);
  std::size_t done = 0;
  int error = 0;
  while (done < text.size() && error == 0) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n > 0) done += static_cast<std::size_t>(n);
    else if (n < 0 && errno != EINTR) error = errno;
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    cannot_write(path, error);
  }
}

}  // namespace

std::string chrome_trace_json(const std::string& process, std::span<const int> tracks,
                              std::span<const TraceSlice> slices) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", process}}}});
  for (const int r : tracks)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", r},
                      {"args", {{"name", "rank " + std::to_string(r)}}}});
  for (const auto& r : slices) {
    events.push_back(slice(r));
    if (r.flow && r.outcome == "ok") events.push_back(flow_point(r));
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump(1) + "\n";
}

void write_call_trace(const std::string& path, const std::vector<RankRecords>& ranks) {
  std::vector<int> tracks;
  for (const auto& rank : ranks) tracks.push_back(rank.rank);
  std::sort(tracks.begin(), tracks.end());
  tracks.erase(std::unique(tracks.begin(), tracks.end()), tracks.end());
  const auto slices = slices_of(ranks);
  write_atomically(path, chrome_trace_json("dist flight recorder", tracks, slices));
}

std::string call_trace_path() { return get_env("DIST_FLIGHT_RECORDER").value_or(""); }

}  // namespace dist::core
