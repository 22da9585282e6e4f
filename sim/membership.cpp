// The elastic membership on sim: dist::reconfigure's agreement (World::reconfigure) and
// Fault::restart's replacement (World::restart). A round gathers the callers; it closes once every
// member of the current membership still running has called (the members that died or returned
// are left out), and every caller, newcomers too, then shares the membership's communicator: a
// new one, with the epoch one higher, when the callers differ from the members.

#include "core/group_text.hpp"
#include "dist/errors.hpp"
#include "sim/world.hpp"

namespace dist::sim {

World::Agreed World::reconfigure(int rank, std::chrono::milliseconds timeout) {
  check_thread(rank);
  std::shared_ptr<Op> round;
  {
    std::unique_lock lock(mutex_);
    throw_if_killed(rank);
    if (!membership_.round || membership_.round->state.load() != Op::State::gathering) open_round();
    round = membership_.round;
    int& slot = round->comm->members[static_cast<std::size_t>(rank)];
    if (slot == rank) --membership_.awaiting;  // a member it waited for
    slot = rank;
    round->arrived.mark(static_cast<std::size_t>(rank));
    close_round_if_agreed();
    // A communication point, also for the last to come: a member alone (its collectives take
    // the one-rank shortcut) must still let the others run and its virtual time pass.
    if (deterministic()) ranks_[static_cast<std::size_t>(rank)].owes_yield = true;
  }
  wait(rank, round, timeout);
  return {static_cast<std::int64_t>(round->seq), round->new_comm};
}

// Under the fabric's lock: a round awaiting the members still running. Its participants (which
// its waits wake, and its errors name as missing) are its communicator's members, by global rank:
// the rank itself when it is awaited or has come, else -1.
void World::open_round() {
  const auto n = static_cast<std::size_t>(size());
  if (!membership_.comm) {  // the first round: the world (made here, not for every run)
    membership_.comm = world_comm_;
    membership_.members = world_comm_->members;
    membership_.incarnations.assign(n, 0);
  }
  auto comm = std::make_shared<Communicator>();
  comm->name = "the membership of epoch " + std::to_string(membership_.epoch);
  comm->rendezvous = true;
  comm->members.assign(n, -1);
  membership_.awaiting = 0;
  for (std::size_t i = 0; i < membership_.members.size(); ++i) {
    const int m = membership_.members[i];
    const RankState& r = ranks_[static_cast<std::size_t>(m)];
    if (r.incarnation != membership_.incarnations[i] || r.finished.load()) continue;
    comm->members[static_cast<std::size_t>(m)] = m;
    ++membership_.awaiting;
  }
  auto op = std::make_shared<Op>();
  op->calls.resize(n);
  for (Call& call : op->calls) call.kind = OpKind::barrier;
  op->arrived.reset(n);
  op->participants = comm->members;
  op->comm = std::move(comm);
  membership_.round = std::move(op);
}

// Under the fabric's lock: `rank`'s process died or returned; an open round no longer awaits it.
void World::left_membership(int rank) {
  const auto& round = membership_.round;
  if (!round || round->state.load() != Op::State::gathering) return;
  int& slot = round->comm->members[static_cast<std::size_t>(rank)];
  if (slot != rank || round->arrived[static_cast<std::size_t>(rank)]) return;
  slot = -1;
  --membership_.awaiting;
  close_round_if_agreed();
}

// Under the fabric's lock: once no running member is awaited, the callers are the membership.
void World::close_round_if_agreed() {
  const auto& round = membership_.round;
  if (!round || round->state.load() != Op::State::gathering || membership_.awaiting > 0) return;
  std::vector<int> joined;
  std::vector<int> incarnations;
  for (int r = 0; r < size(); ++r) {
    if (!round->arrived[static_cast<std::size_t>(r)]) continue;
    joined.push_back(r);
    incarnations.push_back(ranks_[static_cast<std::size_t>(r)].incarnation);
  }
  if (joined != membership_.members || incarnations != membership_.incarnations) {
    ++membership_.epoch;
    membership_.members = joined;
    membership_.incarnations = std::move(incarnations);
    membership_.comm = make_comm(core::group_name(joined), std::move(joined));
  }
  round->new_comm = membership_.comm;
  round->seq = static_cast<std::uint64_t>(membership_.epoch);
  complete(*round, true);
  membership_.round = nullptr;
}

// Under the fabric's lock: a killed process's calls (its program caught the kill and went on)
// end as the first did.
void World::throw_if_killed(int rank) const {
  const RankState& me = ranks_[static_cast<std::size_t>(rank)];
  if (me.restart_after) throw ProcessKilled{me.killed_text};
}

// Under the fabric's lock: the Fault::restart at `rank`'s call #k kills its process. It leaves
// every communicator it is a member of (its peers' calls that need it fail naming it), and a
// round that waited for it may close.
void World::kill_for_restart(int rank, const Fault& fault, const Call& call, int k) {
  RankState& me = ranks_[static_cast<std::size_t>(rank)];
  me.killed_text = "rank " + std::to_string(rank) +
                   " was killed by an injected fault (Fault::restart) at its call #" +
                   std::to_string(k) + ", " + call.describe() + "; it restarts after " +
                   std::to_string(fault.delay.count()) + " ms";
  me.restart_after = fault.delay;
  ++me.incarnation;
  const std::string how = "was killed at its call #" + std::to_string(k) + " (Fault::restart)";
  for (const auto& weak : comms_of_[static_cast<std::size_t>(rank)])
    if (const auto comm = weak.lock()) leave(rank, comm, me.killed_text, how);
  left_membership(rank);
  check_deadlock();
  throw ProcessKilled{me.killed_text};
}

int World::restart(int rank) {
  std::unique_lock lock(mutex_);
  RankState& me = ranks_[static_cast<std::size_t>(rank)];
  sleep(lock, rank, me.restart_after.value_or(std::chrono::milliseconds(0)));
  me.restart_after.reset();
  return me.incarnation;
}

bool World::killed(int rank) const {
  std::lock_guard lock(mutex_);
  return ranks_[static_cast<std::size_t>(rank)].restart_after.has_value();
}

}  // namespace dist::sim
