// Failure detection: how the fabric turns a stuck state into an error. A rank that finished
// (returned or failed) fails the ops it can no longer join, every live rank blocked with no
// progress possible is a deadlock, and a wait past the cluster's timeout fails its op with a
// TimeoutError. The injected faults (Cluster::faults) are applied here too.
#include <string>
#include <utility>
#include <vector>

#include "dist/errors.hpp"
#include "sim/diagnostics.hpp"
#include "sim/world.hpp"

namespace dist::sim {

// A DeadlockError or RankFailure when a participant that has not arrived at op has finished
// (returned or failed) or aborted op's communicator, else null. Called under the op's guard.
std::exception_ptr World::unreachable_error(const Op& op) const {
  if (!op.comm->desync.empty()) return std::make_exception_ptr(DesyncError(op.comm->desync));
  std::vector<int> gone;
  std::vector<int> failed;  // those that failed or aborted the communicator, first to last
  if (op.any_source && op.pair[0] < 0) {  // no sender yet: every other member may still send
    for (const int member : op.comm->members) {
      const RankState& r = ranks_[static_cast<std::size_t>(member)];
      if (member == op.pair[1]) continue;
      const bool aborted = op.comm->aborted(member);
      if (!aborted && !r.finished.load()) return nullptr;
      gone.push_back(member);
      if (aborted || r.error) failed.push_back(member);
    }
  }
  for (std::size_t i = 0; i < op.participants.size(); ++i) {
    if (op.participants[i] < 0 || op.arrived[i]) continue;
    const RankState& r = ranks_[static_cast<std::size_t>(op.participants[i])];
    const bool aborted = op.comm->aborted(op.participants[i]);
    if (!aborted && !r.finished.load()) continue;
    gone.push_back(op.participants[i]);
    if (aborted || r.error) failed.push_back(op.participants[i]);
  }
  if (gone.empty()) return nullptr;
  const std::string msg = unreachable_message(op, gone, [&](int rank) {
    const RankState& r = ranks_[static_cast<std::size_t>(rank)];
    if (const auto* left = op.comm->departure(rank)) return left->how;
    return r.error ? "failed before calling it: " + r.error_text
                   : std::string("returned without calling it");
  });
  if (!failed.empty()) return std::make_exception_ptr(RankFailure(msg, std::move(failed)));
  return std::make_exception_ptr(DeadlockError(msg));
}

void World::abandon(int rank, const std::shared_ptr<Op>& op) noexcept {
  try {
    {
      std::lock_guard lock(mutex_);
      std::lock_guard gate(op->comm->gathering.gate);
      const int i = op->index_of(rank);
      if (op->state.load() == Op::State::gathering && i >= 0)
        fail(*op,
             std::make_exception_ptr(
                 RankFailure(left_message(*op, static_cast<std::size_t>(i), rank), rank)),
             true);
    }
    wait(rank, op);
  } catch (...) {  // its error is the peers' to see; this rank is already leaving by another
  }
}

void World::finish(int rank, std::exception_ptr error, const std::string& what) {
  if (model::Predictor* p = predictor()) p->pause(rank);  // its last stretch of compute
  std::lock_guard lock(mutex_);
  RankState& me = ranks_[static_cast<std::size_t>(rank)];
  if (!me.started) {  // a rank whose thread never started
    me.started = true;
    ++started_;
  }
  me.error = std::move(error);
  me.error_text = what;
  me.finished.store(true);  // after its error: arrivals read them without the lock
  ++finished_;
  refresh_ready(rank);
  // The ops this rank can no longer take part in, judged under their guards (an arrival that
  // comes after this scan sees `finished` instead) and failed after.
  std::vector<std::pair<std::shared_ptr<Op>, std::exception_ptr>> doomed;
  auto visit = [&](const std::shared_ptr<Op>& op) {
    const int i = op->index_of(rank);
    if (op->state.load() != Op::State::gathering) return;
    if (i < 0) {  // an any_source recv this rank might have sent to
      if (auto e = op->any_source ? unreachable_error(*op) : nullptr) doomed.emplace_back(op, e);
      return;
    }
    if (op->arrived[static_cast<std::size_t>(i)]) {
      doomed.emplace_back(op, std::make_exception_ptr(DeadlockError(
                                  abandoned_message(*op, static_cast<std::size_t>(i), rank))));
    } else if (op->waits_to_timeout()) {
      return;
    } else if (auto e = unreachable_error(*op)) {
      doomed.emplace_back(op, std::move(e));
    }
  };
  for (const auto& weak : comms_of_[static_cast<std::size_t>(rank)]) {
    const auto comm = weak.lock();
    if (!comm) continue;
    {
      std::lock_guard gate(comm->gathering.gate);
      comm->gathering.for_each(visit);
    }
    comm->for_each_unmatched(visit);
  }
  for (auto& [op, e] : doomed) fail(*op, std::move(e), true);
  left_membership(rank);  // a member that returns is left out of the membership
  check_deadlock();
  if (deterministic() && (baton_ == rank || (baton_ < 0 && started_ == size()))) pass_baton();
}

// Under the fabric's lock.
void World::check_deadlock() {
  if (blocked_ == 0 || blocked_ + finished_ < size()) return;
  // A monitored barrier's waiters end at their deadline, naming the absent: not a deadlock yet.
  for (const auto& r : ranks_)
    if (r.blocked && r.waits_to_timeout) return;
  for (const auto& op : runnable_)
    if (op->next_chunk.load() < op->plan.chunks) return;  // work is still waiting for hands
  std::vector<std::string> activities;
  activities.reserve(static_cast<std::size_t>(size()));
  for (int r = 0; r < size(); ++r) activities.push_back(rank_activity(r));
  const std::string msg = deadlock_message(activities);
  std::vector<std::shared_ptr<Op>> stuck;
  for (const auto& r : ranks_)
    if (r.blocked && r.waiting_on) stuck.push_back(r.waiting_on);
  for (const auto& op : stuck) fail(*op, std::make_exception_ptr(DeadlockError(msg)), true);
}

// Under the fabric's lock. What the rank does, without its number: "waits in barrier() on ...".
std::string World::rank_activity(int rank) const {
  const RankState& r = ranks_[static_cast<std::size_t>(rank)];
  if (r.finished) return r.error ? "failed (" + r.error_text + ")" : "returned";
  if (!r.waiting_on) return "running outside the fabric";
  const Op& op = *r.waiting_on;
  const int i = op.index_of(rank);
  std::lock_guard gate(op.comm->gathering.gate);  // its arrivals may still be coming
  return "waits in " + op.describe(static_cast<std::size_t>(i)) + waiting_detail(op);
}

// Under the fabric's lock.
void World::fail_on_timeout(const std::shared_ptr<Op>& op, int rank,
                            std::chrono::milliseconds after) {
  std::exception_ptr error;
  {
    std::lock_guard gate(op->comm->gathering.gate);  // its arrivals may still be coming
    const int i = op->index_of(rank);
    error = std::make_exception_ptr(TimeoutError(
        timeout_message(*op, static_cast<std::size_t>(i), rank, after), op->missing()));
  }
  fail(*op, std::move(error), true);
}

void World::apply_faults(std::unique_lock<std::mutex>& lock, int rank, Call& call) {
  if (cluster_.faults.empty()) return;  // the call count serves the faults only
  throw_if_killed(rank);
  const int k = ++ranks_[static_cast<std::size_t>(rank)].calls;
  for (const Fault& f : cluster_.faults) {
    if (f.rank != rank || f.at_call != k) continue;
    switch (f.kind) {
      case Fault::Kind::kill:
        throw RankFailure("rank " + std::to_string(rank) +
                              " was killed by an injected fault at its call #" + std::to_string(k) +
                              ", " + call.describe(),
                          rank);
      case Fault::Kind::fail: call.injected_failure = f.message; break;
      case Fault::Kind::restart: kill_for_restart(rank, f, call, k);  // throws ProcessKilled
      case Fault::Kind::stall: sleep(lock, rank, f.delay); break;
    }
  }
}

}  // namespace dist::sim
