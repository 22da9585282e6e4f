// Error messages of the simulated fabric.
#include "sim/diagnostics.hpp"

#include "core/group_text.hpp"
#include "sim/communicator.hpp"

namespace dist::sim {

std::string rank_list(const std::vector<int>& ranks) { return core::rank_ranges(ranks); }

namespace {
// The calls of op's arrived participants, with their world ranks.
std::vector<core::RankCall> arrived_calls(const Op& op) {
  std::vector<core::RankCall> calls;
  for (std::size_t i = 0; i < op.participants.size(); ++i)
    if (op.arrived[i]) calls.push_back({op.participants[i], op.calls[i].describe()});
  return calls;
}

std::string op_name(const Op& op) {
  std::string where = op.comm ? " on " + op.comm->name : "";
  if (!op.p2p) where += " #" + std::to_string(op.seq);
  return where;
}
}  // namespace

std::string desync_message(const Op& op, std::string_view field) {
  std::string msg = core::desync_message(op.comm ? op.comm->name : "?", op.p2p ? 0 : op.seq, field,
                                         arrived_calls(op));
  const auto missing = op.missing();
  if (!missing.empty()) msg += "\n  (not arrived yet: ranks " + rank_list(missing) + ")";
  return msg;
}

std::string unreachable_message(const Op& op, const std::vector<int>& gone,
                                const std::function<std::string(int)>& how_finished) {
  std::string what = "send/recv" + op_name(op);
  for (std::size_t i = 0; i < op.participants.size() && !op.p2p; ++i)
    if (op.arrived[i]) {
      what = op.describe(i);
      break;
    }
  std::string msg = what + " can never complete:";
  core::RanksByText by_how;  // "ranks 0-9 returned without calling it"
  for (int r : gone) by_how.add(r, how_finished(r));
  msg += by_how.lines(" ");
  msg += "\n  posted:" + core::call_lines(arrived_calls(op));
  return msg;
}

std::string abandoned_message(const Op& op, std::size_t i, int rank) {
  return "rank " + std::to_string(rank) + " returned while its " + op.describe(i) +
         " was still unmatched (wait() on every Work before returning)";
}

std::string left_message(const Op& op, std::size_t i, int rank) {
  return "rank " + std::to_string(rank) + " left by an exception while its " + op.describe(i) +
         " was in flight (its buffers went with it)";
}

std::string deadlock_message(const std::vector<std::string>& activities) {
  core::RanksByText by_activity;
  for (std::size_t r = 0; r < activities.size(); ++r)
    by_activity.add(static_cast<int>(r), activities[r]);
  return "no rank can make progress" + by_activity.lines(": ");
}

std::string waiting_detail(const Op& op) {
  if (op.any_source && op.pair[0] < 0) return " (no rank of " + op.comm->name + " sent to it)";
  const auto missing = op.missing();
  if (missing.empty()) return "";
  return op.p2p ? " (no matching call from rank " + rank_list(missing) + ")"
                : " (missing: ranks " + rank_list(missing) + ")";
}

std::string timeout_message(const Op& op, std::size_t i, int rank,
                            std::chrono::milliseconds timeout) {
  const std::string head = "rank " + std::to_string(rank) + " timed out after " +
                           std::to_string(timeout.count()) + " ms in " + op.describe(i);
  if (op.any_source && op.pair[0] < 0)
    return head + "; no rank of " + op.comm->name + " sent to it";
  return head + "; never arrived: ranks " + rank_list(op.missing());
}

std::string outcome_lines(std::span<const Outcome> outcomes) {
  core::RanksByText by_message;
  for (const Outcome& o : outcomes) by_message.add(o.rank, o.message);
  std::string out;
  for (const auto& [message, ranks] : by_message.groups()) {
    out += "\n  " + core::ranks_phrase(ranks) + ": ";
    for (const char c : message) {  // the message's own lines indented under the ranks' line
      out += c;
      if (c == '\n') out += "    ";
    }
  }
  return out;
}

}  // namespace dist::sim
