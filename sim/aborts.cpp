// A rank leaving a communicator at once: dist::abort (World::abort), a process killed by a
// Fault::restart (sim/membership.cpp) and a shrink whose survivors disagree (World::shrunk_comm).
// The communicator's calls still gathering, and the unmatched sends and receives of the rank, fail
// with a RankFailure naming it (its own waits turn that into Aborted: SimBackend); a peer's later
// call that needs it fails the same way at its first arrival (World::unreachable_error). A call
// whose arrivals are complete (running its chunks) is neither gathering nor unmatched: it runs on.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/group_text.hpp"
#include "dist/errors.hpp"
#include "sim/diagnostics.hpp"
#include "sim/world.hpp"

namespace dist::sim {

void World::abort(int rank, const std::shared_ptr<Communicator>& comm, const std::string& why) {
  std::lock_guard lock(mutex_);
  leave(rank, comm, why, "aborted " + comm->name + " (dist::abort)");
  check_deadlock();
}

// Under the fabric's lock.
void World::leave(int rank, const std::shared_ptr<Communicator>& comm, const std::string& why,
                  const std::string& how) {
  // Each doomed op and its error's text, made under the op's guard (the gate for the gathering
  // ones, the fabric's lock for the unmatched).
  std::vector<std::pair<std::shared_ptr<Op>, std::string>> doomed;
  auto visit = [&](const std::shared_ptr<Op>& op) {
    if (op->state.load() != Op::State::gathering) return;
    const int i = op->index_of(rank);
    if (op->p2p && i < 0) return;  // another pair's send or receive
    doomed.emplace_back(op, op->describe(static_cast<std::size_t>(std::max(i, 0))) + ": rank " +
                                std::to_string(rank) + " " + how + " while this call was pending");
  };
  {
    std::lock_guard gate(comm->gathering.gate);
    if (!comm->aborted(rank)) comm->aborted_by.push_back({rank, why, how});
    comm->gathering.for_each(visit);
  }
  comm->for_each_unmatched(visit);
  for (auto& [op, text] : doomed) fail(*op, std::make_exception_ptr(RankFailure(text, rank)), true);
}

// shrink_group's communicators are met by (parent, k): the first survivor's list makes it, and a
// survivor whose list differs gets a DesyncError and poisons it, so the others' calls on it fail
// with the same DesyncError instead of waiting for ranks that are not coming.
std::shared_ptr<Communicator> World::shrunk_comm(const std::shared_ptr<Communicator>& parent,
                                                 const std::vector<int>& survivors, int k,
                                                 int rank) {
  std::lock_guard lock(mutex_);
  auto& held = shrunk_comms_[{parent->id, k}];
  std::vector<int> members;
  for (const int r : survivors) members.push_back(parent->members[static_cast<std::size_t>(r)]);
  if (!held.comm) {
    held.comm = make_comm(core::group_name(members), members);
    held.first = rank;
    return held.comm;
  }
  if (held.comm->members == members) return held.comm;
  const std::string text = "shrink_group of " + parent->name + ": rank " + std::to_string(rank) +
                           " keeps ranks " + rank_list(members) + " but rank " +
                           std::to_string(held.first) + ", the first to shrink it, " +
                           "kept ranks " + rank_list(held.comm->members) +
                           " (every survivor passes the same excluded_ranks)";
  const auto comm = held.comm;
  std::vector<std::shared_ptr<Op>> doomed;
  {
    std::lock_guard gate(comm->gathering.gate);
    if (comm->desync.empty()) comm->desync = text;
    comm->gathering.for_each([&](const std::shared_ptr<Op>& op) { doomed.push_back(op); });
  }
  comm->for_each_unmatched([&](const std::shared_ptr<Op>& op) { doomed.push_back(op); });
  for (const auto& op : doomed) fail(*op, std::make_exception_ptr(DesyncError(comm->desync)), true);
  check_deadlock();
  throw DesyncError(text);
}

}  // namespace dist::sim
