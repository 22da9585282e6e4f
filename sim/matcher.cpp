// Matching of collectives: a rank's call arrives at its communicator's op of the same sequence
// number (made by the first arrival), is checked against the first arrival's (a DesyncError names
// the field that differs), and the last arrival hands the op to execution (executor.cpp). An op
// that can never gather every participant fails at once (failure_detector.cpp).
#include <algorithm>

#include "dist/errors.hpp"
#include "sim/diagnostics.hpp"
#include "sim/fibers.hpp"
#include "sim/spin.hpp"
#include "sim/world.hpp"

namespace dist::sim {

namespace {
// The largest communicator for which a rank keeps a spare op (World::post_collective).
constexpr std::size_t spare_limit = 64;
}  // namespace

std::shared_ptr<Op> World::post_collective(const std::shared_ptr<Communicator>& comm,
                                           int group_rank, Call&& call) {
  std::unique_lock<std::mutex> lock;
  const int rank = comm->members[static_cast<std::size_t>(group_rank)];
  check_thread(rank);
  if (fibers_) fibers_->prefetch_upcoming();  // mid-turn: the next rank's frames, ahead
  const auto inside = in_fabric(rank);
  if (locked_) {
    lock = lock_fabric();
    apply_faults(lock, rank, call);
    if (observers_.timing()) call.start_us = call_time(rank);
  }
  const std::uint64_t seq = comm->next_seq[static_cast<std::size_t>(group_rank)]++;
  const std::size_t n = comm->members.size();
  // A rank keeps a spare op for small communicators only (one per rank sized by a large one
  // would make memory grow as ranks squared), and only in concurrent mode, where it spares an
  // allocation under the gathering's gate: one rank at a time needs none (a large world's spares
  // would hold memory for nothing).
  std::shared_ptr<Op>& spare = ranks_[static_cast<std::size_t>(rank)].spare;
  const bool keeps_spare = !deterministic() && n <= spare_limit;
  if (keeps_spare && (!spare || spare->calls.size() != n)) spare = op_pool_.take(n);
  std::shared_ptr<Op> op;
  Arrival arrival;
  {
    std::lock_guard gate(comm->gathering.gate);
    std::shared_ptr<Op>* held = comm->gathering.find(seq);
    if (held) {
      // Ask for the lines this arrival writes in exclusive state at once (another rank last
      // wrote them, and waiters poll the state line): one transfer each instead of two; and for
      // the call it is checked against, at the same time.
      const auto g = static_cast<std::size_t>(group_rank);
      prefetch_for_write(&(*held)->state);
      prefetch_for_write(&(*held)->calls[g]);
      __builtin_prefetch(&(*held)->calls[g == 0 ? 1 : 0]);
    } else {
      auto fresh = keeps_spare ? std::move(spare) : op_pool_.take(n);
      if (fresh->comm != comm) fresh->comm = comm;  // a recycled op often served this one
      if (observers_.tracing()) fresh->id = next_op_id_++;  // (only traces use ids; under the lock)
      fresh->seq = seq;
      const std::span<const int> members = comm->members;  // a view: the op holds the communicator
      if (fresh->participants.data() != members.data() || fresh->participants.size() != n)
        fresh->participants = members;
      held = &comm->gathering.add(seq, std::move(fresh));
    }
    // The last arrival takes the gathering's reference instead of sharing it (one less count
    // change on a control block every participant touches).
    if ((*held)->arrived.count() + 1 == n) op = comm->gathering.remove(seq);
    else op = *held;
    arrival = register_arrival(*op, static_cast<std::size_t>(group_rank), std::move(call));
    // The last arrival completes a small op before leaving the gate, while the op's state line
    // is still its own (waiters poll it); waking anyone waits until after (lock order).
    if (arrival.kind == Arrival::Kind::all_arrived && !locked_ &&
        op->calls.front().kind != OpKind::split && op->calls.front().kind != OpKind::split_groups) {
      if (!run_inline(*op)) arrival.kind = Arrival::Kind::planned;
      else
        arrival.kind =
            op->close(Op::State::done) ? Arrival::Kind::completed : Arrival::Kind::waiting;
    }
  }
  settle(op, static_cast<std::size_t>(group_rank), std::move(arrival), locked_);
  observers_.posted(rank, *op, op->calls[static_cast<std::size_t>(group_rank)]);
  // A communication point: the others get the baton, but at the rank's next step in the fabric
  // (its wait, test or next post) rather than here. A blocking collective waits at once, and a
  // wait that blocks passes the baton anyway: switching here too would cost every rank that is
  // not the last to arrive two switches per collective instead of one. A second post in a row
  // pays the first's, so a rank posting many never keeps the baton for long.
  if (locked_ && deterministic()) {
    bool& owes = ranks_[static_cast<std::size_t>(rank)].owes_yield;
    if (owes) yield(lock, rank);  // pays the earlier post's switch; this one owes none
    else owes = true;
  }
  return op;
}

// The verdict that an arrival fails the op. The op turns failing here, under its guard, so that
// no later arrival finds the calls complete and runs them before settle() ends it: a desync is
// judged against the first arrival only, and the rank that differed wrote its call already.
World::Arrival World::failing(Op& op, std::exception_ptr error) {
  if (!op.close(Op::State::failing)) return {Arrival::Kind::joined_failed, {}};
  return {Arrival::Kind::fail, std::move(error)};
}

// Records participant `index`'s call and judges the op from what has arrived so far. Called
// under the op's guard (the gate for a collective, the fabric's lock for p2p); the verdict is
// acted on by settle() after leaving the gate.
World::Arrival World::register_arrival(Op& op, std::size_t index, Call&& call) {
  op.calls[index].take(std::move(call));
  op.arrived.mark(index);
  const auto s = op.state.load();
  if (s == Op::State::failing || s == Op::State::failed) return {Arrival::Kind::joined_failed, {}};
  if (!op.calls[index].injected_failure.empty()) {
    return failing(
        op, std::make_exception_ptr(BackendError(
                op.describe(index) + " failed on rank " + std::to_string(op.participants[index]) +
                ": " + op.calls[index].injected_failure + " (injected fault)")));
  }
  if (op.arrived.count() > 1) {  // every earlier arrival already agrees with the first one
    const Call& first = op.calls[op.arrived.first()];
    const auto field = differing_field(first, op.calls[index]);
    if (!field.empty())
      return failing(op, std::make_exception_ptr(DesyncError(desync_message(op, field))));
    // The same list as the first arrival's: share it (its own copy is freed here).
    if (first.kind == OpKind::split) op.calls[index].split_ranks = first.split_ranks;
  }
  if (op.arrived.count() == op.arrived.size()) return {Arrival::Kind::all_arrived, {}};
  if (op.waits_to_timeout()) return {};
  // Only the first arrival looks for participants that have finished: a rank that finishes later
  // finds this op among its communicators' (World::finish).
  if (op.arrived.count() == 1)
    if (auto error = unreachable_error(op)) return failing(op, std::move(error));
  return {};
}

void World::settle(const std::shared_ptr<Op>& op, std::size_t index, Arrival arrival, bool locked) {
  switch (arrival.kind) {
    case Arrival::Kind::waiting: return;
    case Arrival::Kind::joined_failed:
      observers_.joined_failed(*op, index, [&] { return end_time(*op); });
      return;
    case Arrival::Kind::fail: end_failing(*op, std::move(arrival.error), locked); return;
    case Arrival::Kind::all_arrived: on_all_arrived(op, locked); return;
    case Arrival::Kind::completed: wake(*op, locked); return;
    case Arrival::Kind::planned: publish_chunks(op, locked); return;
  }
}

void World::on_all_arrived(const std::shared_ptr<Op>& op, bool locked) {
  observers_.all_arrived(*op);
  const Call& first = op->calls.front();
  if (first.kind == OpKind::split) {
    std::vector<int> members;
    for (int r : first.ranks()) members.push_back(op->comm->members[static_cast<std::size_t>(r)]);
    std::string name = core::group_name(members);
    std::unique_lock<std::mutex> lock;
    if (!locked) lock = lock_fabric();
    op->new_comm = make_comm(std::move(name), std::move(members));
    release_lists(*op);
  } else if (first.kind == OpKind::split_groups) {
    make_layout_comms(*op, locked);
    release_lists(*op);
  }
  if (run_inline(*op)) complete(*op, locked);
  else publish_chunks(op, locked);
}

}  // namespace dist::sim
