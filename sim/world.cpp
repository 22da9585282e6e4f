// The simulated fabric: making communicators, posting and matching calls, injecting faults and
// executing ready ops in chunks (waiting is in world_wait.cpp, stuck states in world_failures.cpp).
#include "sim/world.hpp"

#include <algorithm>
#include <thread>

#include "dist/errors.hpp"
#include "sim/diagnostics.hpp"
#include "sim/fibers.hpp"
#include "sim/plan.hpp"
#include "sim/spin.hpp"

namespace dist::sim {

namespace {
// Ops moving at most this many bytes in one chunk run on the rank that completes their arrival.
constexpr std::size_t inline_bytes = 16 * 1024;
// The largest communicator for which a rank keeps a spare op (World::post_collective).
constexpr std::size_t spare_limit = 64;
// Tries at the fabric's lock before sleeping on it, when every rank has a core (sim/spin.hpp):
// two ranks posting the same small op contend for it on every call.
constexpr int lock_spins = 200;

// Moves op from gathering or ready (still open) to `to`; false when another rank closed it first.
bool close_op(Op& op, Op::State to) {
  auto s = op.state.load();
  do {
    if (s != Op::State::gathering && s != Op::State::ready) return false;
  } while (!op.state.compare_exchange_weak(s, to));
  return true;
}

std::vector<int> iota_ranks(int begin, int count) {
  std::vector<int> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = begin + i;
  return out;
}
}  // namespace

World::World(const Cluster& cluster)
    : cluster_(cluster),
      start_(std::chrono::steady_clock::now()),
      ranks_(static_cast<std::size_t>(cluster.world_size())),
      comms_of_(static_cast<std::size_t>(cluster.world_size())),
      op_pool_(cluster.world_size(), cluster.schedule == Schedule::deterministic),
      schedule_rng_(cluster.seed ^ 0x9e3779b97f4a7c15ull),
      ready_(deterministic() ? cluster.world_size() : 0) {
  if (!cluster.trace.empty()) trace_.emplace(cluster.trace_ranks, cluster.world_size());
  if (cluster_.network) predictor_ = std::make_unique<model::Predictor>(cluster_);
  const auto cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int n = cluster.world_size();
  spare_cores_ = n <= cores;
  yield_rounds_ = spare_cores_ ? 200 : n <= 8 * cores ? 16 : 0;
  polls_per_yield_ = spare_cores_ ? 4 : 1;  // more polls per yield ran slower
  locked_ = deterministic() || trace_ || !cluster.faults.empty();
  stretch_ = std::max(1, n / 1024);
  world_comm_ = make_comm("world", iota_ranks(0, cluster.world_size()));
  for (int node = 0; node < cluster.nodes; ++node)
    node_comms_.push_back(make_comm("node " + std::to_string(node),
                                    iota_ranks(node * cluster.ranks_per_node,
                                               cluster.ranks_per_node)));
}

World::~World() {
  runnable_.clear();
  for (const auto& weak : comms_) {
    if (const auto comm = weak.lock()) {
      comm->gathering.clear();
      comm->unmatched_sends.clear();
      comm->unmatched_recvs.clear();
      comm->any_source_recvs.clear();
    }
  }
}

const std::shared_ptr<Comm>& World::node_comm(int node) const {
  return node_comms_.at(static_cast<std::size_t>(node));
}

double World::now_us() const {
  if (deterministic()) return virtual_us_;
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
      .count();
}

double World::call_time(int rank) const { return predictor_ ? predictor_->clock(rank) : now_us(); }

double World::end_time(const Op& op) const {
  if (!predictor_) return now_us();
  double end = op.model_end_us;
  for (std::size_t i = 0; i < op.calls.size(); ++i)
    if (op.arrived[i]) end = std::max(end, op.calls[i].start_us);
  return end;
}

World::InFabric World::in_fabric(int rank) {
  if (predictor_) predictor_->pause(rank);
  return {predictor_.get(), rank};
}

void World::write_trace() const {
  std::lock_guard lock(mutex_);
  if (trace_) trace_->write(cluster_.trace);
}

void World::apply_faults(std::unique_lock<std::mutex>& lock, int rank, Call& call) {
  if (cluster_.faults.empty()) return;  // the call count serves the faults only
  const int k = ++ranks_[static_cast<std::size_t>(rank)].calls;
  for (const Fault& f : cluster_.faults) {
    if (f.rank != rank || f.at_call != k) continue;
    switch (f.kind) {
      case Fault::Kind::kill:
        throw RankFailure("rank " + std::to_string(rank) + " was killed by an injected fault at its call #" +
                              std::to_string(k) + ", " + call.describe(),
                          rank);
      case Fault::Kind::fail:
        call.injected_failure = f.message;
        break;
      case Fault::Kind::stall:
        if (deterministic()) {
          if (predictor_)
            predictor_->add_compute(rank,
                                    std::chrono::duration<double, std::micro>(f.delay).count());
          ranks_[static_cast<std::size_t>(rank)].sleep_until_us =
              virtual_us_ + std::chrono::duration<double, std::micro>(f.delay).count();
          refresh_ready(rank);
          pass_baton();
          await_baton(lock, rank);
        } else {
          lock.unlock();
          std::this_thread::sleep_for(f.delay);
          lock.lock();
        }
        break;
    }
  }
}

std::shared_ptr<Comm> World::make_comm(std::string name, std::vector<int> members) {
  auto comm = std::make_shared<Comm>();
  comm->id = next_comm_id_++;
  comm->name = std::move(name);
  comm->next_seq.assign(members.size(), !deterministic());
  comm->members = std::move(members);
  comm->sorted = std::is_sorted(comm->members.begin(), comm->members.end());
  comms_.push_back(comm);
  for (const int r : comm->members) comms_of_[static_cast<std::size_t>(r)].push_back(comm);
  return comm;
}

std::unique_lock<std::mutex> World::lock_fabric() {
  return lock_spinning(mutex_, spare_cores_ ? lock_spins : 0);
}

std::shared_ptr<Op> World::post_collective(const std::shared_ptr<Comm>& comm, int group_rank,
                                           Call&& call) {
  std::unique_lock<std::mutex> lock;
  const int rank = comm->members[static_cast<std::size_t>(group_rank)];
  check_thread(rank);
  if (fibers_) fibers_->prefetch_upcoming();  // mid-turn: the next rank's frames, ahead
  const auto inside = in_fabric(rank);
  if (locked_) {
    lock = lock_fabric();
    apply_faults(lock, rank, call);
    if (trace_ || predictor_) call.start_us = call_time(rank);
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
      if (trace_) fresh->id = next_op_id_++;        // (only traces use ids; under the lock)
      fresh->seq = seq;
      const std::span<const int> members = comm->members;  // a view: the op holds the communicator
      if (fresh->participants.data() != members.data() || fresh->participants.size() != n)
        fresh->participants = members;
      held = &comm->gathering.add(seq, std::move(fresh));
    }
    // The last arrival takes the gathering's reference instead of sharing it (one less count
    // change on a control block every participant touches).
    if ((*held)->arrived.count() + 1 == n)
      op = comm->gathering.remove(seq);
    else
      op = *held;
    arrival = register_arrival(*op, static_cast<std::size_t>(group_rank), std::move(call));
    // The last arrival completes a small op before leaving the gate, while the op's state line
    // is still its own (waiters poll it); waking anyone waits until after (lock order).
    if (arrival.kind == Arrival::Kind::all_arrived && !locked_ &&
        op->calls.front().kind != OpKind::split && op->calls.front().kind != OpKind::split_groups) {
      if (!run_inline(*op))
        arrival.kind = Arrival::Kind::planned;
      else
        arrival.kind =
            close_op(*op, Op::State::done) ? Arrival::Kind::completed : Arrival::Kind::waiting;
    }
  }
  settle(op, static_cast<std::size_t>(group_rank), std::move(arrival), locked_);
  if (predictor_) predictor_->on_posted(rank, *op, op->calls[static_cast<std::size_t>(group_rank)]);
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

// Records participant `index`'s call and judges the op from what has arrived so far. Called
// under the op's guard (the gate for a collective, the fabric's lock for p2p); the verdict is
// acted on by settle() after leaving the gate.
World::Arrival World::register_arrival(Op& op, std::size_t index, Call&& call) {
  op.calls[index].take(std::move(call));
  op.arrived.mark(index);
  const auto s = op.state.load();
  if (s == Op::State::failing || s == Op::State::failed) return {Arrival::Kind::joined_failed, {}};
  if (!op.calls[index].injected_failure.empty()) {
    return {Arrival::Kind::fail,
            std::make_exception_ptr(BackendError(
                op.describe(index) + " failed on rank " + std::to_string(op.participants[index]) +
                ": " + op.calls[index].injected_failure + " (injected fault)"))};
  }
  if (op.arrived.count() > 1) {  // every earlier arrival already agrees with the first one
    const Call& first = op.calls[op.arrived.first()];
    const auto field = differing_field(first, op.calls[index]);
    if (!field.empty())
      return {Arrival::Kind::fail, std::make_exception_ptr(DesyncError(desync_message(op, field)))};
    // The same list as the first arrival's: share it (its own copy is freed here).
    if (first.kind == OpKind::split) op.calls[index].split_ranks = first.split_ranks;
  }
  if (op.arrived.count() == op.arrived.size())
    return {Arrival::Kind::all_arrived, {}};
  if (op.waits_to_timeout()) return {};
  // Only the first arrival looks for participants that have finished: a rank that finishes later
  // finds this op among its communicators' (World::finish).
  if (op.arrived.count() == 1)
    if (auto error = unreachable_error(op)) return {Arrival::Kind::fail, std::move(error)};
  return {};
}

void World::settle(const std::shared_ptr<Op>& op, std::size_t index, Arrival arrival,
                   bool locked) {
  switch (arrival.kind) {
    case Arrival::Kind::waiting:
      return;
    case Arrival::Kind::joined_failed:
      if (trace_) trace_->record_one(*op, index, end_time(*op), outcome_of(op->error));
      return;
    case Arrival::Kind::fail:
      fail(*op, std::move(arrival.error), locked);
      return;
    case Arrival::Kind::all_arrived:
      on_all_arrived(op, locked);
      return;
    case Arrival::Kind::completed:
      wake(*op, locked);
      return;
    case Arrival::Kind::planned:
      publish_chunks(op, locked);
      return;
  }
}

void World::on_all_arrived(const std::shared_ptr<Op>& op, bool locked) {
  if (predictor_) predictor_->on_all_arrived(*op);
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
  if (run_inline(*op))
    complete(*op, locked);
  else
    publish_chunks(op, locked);
}

// One rank runs at a time in deterministic mode, and a small op is over sooner than waiters
// could claim its chunk: the arriving rank moves all the data. Returns false, with op.plan set,
// for an op whose chunks every waiting rank may run.
bool World::run_inline(Op& op) {
  const Call& first = op.calls.front();
  Plan plan = make_plan(op);
  const std::size_t bytes = first.count * dtype_size(first.dtype) * op.calls.size();
  const bool small = plan.chunks == 1 && bytes <= inline_bytes;
  if (plan.chunks == 0 || deterministic() || small) {
    for (std::size_t c = 0; c < plan.chunks; ++c) plan.run(op, c);
    return true;
  }
  op.plan = std::move(plan);
  return false;
}

void World::publish_chunks(const std::shared_ptr<Op>& op, bool locked) {
  auto s = Op::State::gathering;
  if (!op->state.compare_exchange_strong(s, Op::State::ready)) return;  // failed meanwhile
  std::unique_lock<std::mutex> lock;
  if (!locked) lock = lock_fabric();
  runnable_.push_back(op);
  wake(*op, true);
}

// Moves op from gathering or ready to failed with `error`, once: a second failer, or one that
// comes after completion, changes nothing.
void World::fail(Op& op, std::exception_ptr error, bool locked) {
  if (!close_op(op, Op::State::failing)) return;
  op.error = std::move(error);
  op.state.store(Op::State::failed);
  if (trace_) trace_->record_op(op, end_time(op), outcome_of(op.error));
  wake(op, locked);
}

void World::complete(Op& op, bool locked) {
  if (!close_op(op, Op::State::done)) return;  // failed meanwhile
  if (trace_) trace_->record_op(op, end_time(op), "ok");
  wake(op, locked);
}

// Wakes op's blocked participants. The state change before it and a waiter's `blocked` flag
// are both sequentially consistent, and a waiter sets its flag before it looks at the state a
// last time (wait_concurrent): so either it sees the change, or this sees it blocked.
void World::wake(const Op& op, bool locked) {
  std::unique_lock<std::mutex> lock;
  for (int p : op.participants) {
    if (p < 0) continue;  // an any_source recv's sender, failed before one matched
    RankState& r = ranks_[static_cast<std::size_t>(p)];
    if (!r.blocked.load()) continue;  // it polls, or (deterministic) waits for the baton, not this op
    if (!locked && !lock.owns_lock()) {
      lock = std::unique_lock(mutex_);
      if (!r.blocked.load()) continue;  // woken by another op meanwhile
    }
    r.blocked.store(false);
    --blocked_;
    if (deterministic()) refresh_ready(p);
    else r.cv.notify_one();
  }
}

}  // namespace dist::sim
