// Descriptions of calls and ops for error messages, and the fingerprint comparison.
#include "sim/op.hpp"

#include <algorithm>

#include "sim/communicator.hpp"

namespace dist::sim {

void Call::take(Call&& other) {
  static_cast<core::CallDesc&>(*this) = other;
  in = other.in;
  out = other.out;
  start_us = other.start_us;
  if (split_ranks || other.split_ranks) split_ranks = std::move(other.split_ranks);
  if (!counts.empty() || !other.counts.empty()) counts = std::move(other.counts);
  if (!injected_failure.empty() || !other.injected_failure.empty())
    injected_failure = std::move(other.injected_failure);
}

std::string_view differing_field(const Call& a, const Call& b) {
  if (const auto field = core::differing_field(a, b); !field.empty()) return field;
  if (a.kind == OpKind::split && a.split_ranks != b.split_ranks &&
      !std::ranges::equal(a.ranks(), b.ranks()))
    return "ranks";
  // split_groups: each rank's own list differs; the layout's hash (lists) is compared by core's.
  if (a.kind == OpKind::all_gather_v && a.counts != b.counts) return "counts";
  return {};
}

int Op::index_of(int rank) const {
  const auto it = std::find(participants.begin(), participants.end(), rank);
  return it == participants.end() ? -1 : static_cast<int>(it - participants.begin());
}

std::string Op::describe(std::size_t i) const {
  if (comm && comm->rendezvous) return "dist::reconfigure() in " + comm->name;
  std::string where = comm ? " on " + comm->name : "";
  if (!p2p) where += " #" + std::to_string(seq);
  return calls[i].describe() + where;
}

bool Op::waits_to_timeout() const {
  if (arrived.count() == 0) return false;
  const Call& first = calls[arrived.first()];  // every arrival agrees with it (or the op failed)
  return first.kind == OpKind::barrier && first.tag == monitored_barrier_tag;
}

std::vector<int> Op::missing() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < participants.size(); ++i)
    if (!arrived[i] && participants[i] >= 0) out.push_back(participants[i]);
  return out;
}

}  // namespace dist::sim
