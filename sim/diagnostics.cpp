// Error messages of the simulated fabric.
#include "sim/diagnostics.hpp"

#include "sim/communicator.hpp"

namespace dist::sim {

std::string rank_list(const std::vector<int>& ranks) {
  // Runs of three or more consecutive ranks are written as ranges: "0-3, 7, 9, 10".
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ", ");
    if (j - i >= 2) {
      out += std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      out += std::to_string(ranks[i]);
      ++i;
    }
  }
  return out;
}

namespace {
std::string arrived_calls(const Op& op) {
  std::string out;
  for (std::size_t i = 0; i < op.participants.size(); ++i) {
    if (!op.arrived[i]) continue;
    out += "\n  rank " + std::to_string(op.participants[i]) + " called " + op.calls[i].describe();
  }
  return out;
}

std::string op_name(const Op& op) {
  std::string where = op.comm ? " on " + op.comm->name : "";
  if (!op.p2p) where += " #" + std::to_string(op.seq);
  return where;
}
}  // namespace

std::string desync_message(const Op& op, std::string_view field) {
  std::vector<core::RankCall> calls;
  for (std::size_t i = 0; i < op.participants.size(); ++i)
    if (op.arrived[i]) calls.push_back({op.participants[i], op.calls[i].describe()});
  std::string msg =
      core::desync_message(op.comm ? op.comm->name : "?", op.p2p ? 0 : op.seq, field, calls);
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
  for (int r : gone) msg += "\n  " + how_finished(r);
  msg += "\n  posted:" + arrived_calls(op);
  return msg;
}

std::string abandoned_message(const Op& op, std::size_t i, int rank) {
  return "rank " + std::to_string(rank) + " returned while its " + op.describe(i) +
         " was still unmatched (wait() on every Work before returning)";
}

std::string deadlock_message(const std::vector<std::string>& lines) {
  std::string msg = "no rank can make progress";
  for (const auto& l : lines) msg += "\n  " + l;
  return msg;
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

}  // namespace dist::sim
