// Execution of matched ops: the op's plan (plan.cpp, copy_plan.cpp) moves and reduces the data,
// on the last arrival for a small op or in chunks any waiting rank may claim for a large one; an
// op ends once, done or failed, and its blocked participants are woken.
#include "sim/plan.hpp"
#include "sim/world.hpp"

namespace dist::sim {

namespace {
// Ops moving at most this many bytes in one chunk run on the rank that completes their arrival.
constexpr std::size_t inline_bytes = 16 * 1024;
}  // namespace

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
  if (op.close(Op::State::failing)) end_failing(op, std::move(error), locked);
}

void World::end_failing(Op& op, std::exception_ptr error, bool locked) {
  op.error = std::move(error);
  op.state.store(Op::State::failed);
  observers_.ended(op, [&] { return end_time(op); });
  wake(op, locked);
}

void World::complete(Op& op, bool locked) {
  if (!op.close(Op::State::done)) return;  // failed meanwhile
  observers_.ended(op, [&] { return end_time(op); });
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
    if (!r.blocked.load())
      continue;  // it polls, or (deterministic) waits for the baton, not this op
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

bool World::execute_chunk(Op& op) {
  const std::size_t c = op.next_chunk.fetch_add(1, std::memory_order_relaxed);
  if (c >= op.plan.chunks) return false;
  op.plan.run(op, c);
  if (op.done_chunks.fetch_add(1, std::memory_order_acq_rel) + 1 == op.plan.chunks) {
    std::unique_lock<std::mutex> lock;
    if (locked_) lock = lock_fabric();
    complete(op, locked_);
  }
  return true;
}

std::shared_ptr<Op> World::next_runnable() {
  while (!runnable_.empty()) {
    auto& front = runnable_.front();
    if (front->next_chunk.load(std::memory_order_relaxed) < front->plan.chunks) return front;
    runnable_.pop_front();
  }
  return nullptr;
}

// One look at `op` without the lock: finished (its error rethrown), one of its chunks run, every
// chunk already claimed by other ranks, or still gathering its arrivals.
World::Poll World::poll(Op& op) {
  const auto s = op.state.load(std::memory_order_acquire);
  if (s == Op::State::done) return Poll::finished;
  if (s == Op::State::failed) std::rethrow_exception(op.error);
  if (s != Op::State::ready) return Poll::waiting;
  return execute_chunk(op) ? Poll::worked : Poll::claimed;
}

}  // namespace dist::sim
