// find_divergence: per group, the calls both ranks hold; the first whose chains differ names the
// divergence, and the first whose descriptions differ names the call.
#include "core/calls/cross_check.hpp"

#include <algorithm>
#include <map>

namespace dist::core {

namespace {
const CallRecord* find(const std::vector<CallRecord>& records, const std::string& group,
                       std::uint64_t seq) {
  for (auto r = records.rbegin(); r != records.rend(); ++r)
    if (r->group_key == group && r->seq == seq) return &*r;
  return nullptr;
}

std::vector<RankCall> by_rank(int me, const CallRecord& mine, int peer, const CallRecord& theirs) {
  std::vector<RankCall> calls{{me, describe(mine.call)}, {peer, describe(theirs.call)}};
  if (peer < me) std::swap(calls[0], calls[1]);
  return calls;
}
}  // namespace

std::string find_divergence(const std::vector<CallRecord>& mine, int me,
                            const std::vector<CallRecord>& theirs, int peer) {
  // Per group (by key), the numbers both hold, in order.
  std::map<std::string, std::vector<std::uint64_t>> shared;
  for (const CallRecord& t : theirs)
    if (t.seq > 0 && find(mine, t.group_key, t.seq)) shared[t.group_key].push_back(t.seq);
  for (auto& [key, seqs] : shared) {
    const std::string& group = key;  // found by key; the messages use the records' names
    std::sort(seqs.begin(), seqs.end());
    const auto diverged = std::find_if(seqs.begin(), seqs.end(), [&, &g = group](std::uint64_t s) {
      return find(mine, g, s)->chain != find(theirs, g, s)->chain;
    });
    if (diverged == seqs.end()) continue;
    for (const std::uint64_t s : seqs) {
      const CallRecord& a = *find(mine, group, s);
      const CallRecord& b = *find(theirs, group, s);
      if (const auto field = differing_field(a.call, b.call); !field.empty())
        return desync_message(a.group, s, field, by_rank(me, a, peer, b)) +
               "\n  (found by comparing the ranks' published calls: the calls completed, with "
               "wrong results)";
    }
    const CallRecord& a = *find(mine, group, *diverged);
    const CallRecord& b = *find(theirs, group, *diverged);
    return "collective on " + a.group + ": ranks " + std::to_string(std::min(me, peer)) + " and " +
           std::to_string(std::max(me, peer)) + " made different calls at or before #" +
           std::to_string(*diverged) + ", earlier than the calls compared (rank " +
           std::to_string(me) + "'s #" + std::to_string(*diverged) + " is " + describe(a.call) +
           ", rank " + std::to_string(peer) + "'s " + describe(b.call) + ")";
  }
  return {};
}

}  // namespace dist::core
