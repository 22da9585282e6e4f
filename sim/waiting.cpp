// How ranks wait in the fabric in concurrent mode: spin briefly, help execute ready ops, then
// block on the rank's condition variable with a real deadline. (Deterministic mode's waits are
// the scheduler's: scheduler.cpp.) Work::is_completed's test is here for both modes.
#include <sched.h>

#include <algorithm>
#include <thread>

#include "sim/spin.hpp"
#include "sim/world.hpp"

namespace dist::sim {

namespace {
// With a core per rank, a waiter first polls without system calls while the other participants
// run on other cores: they answer a small op within a microsecond, and a yield would only hand
// this core to another process for a whole time slice on a busy machine. But a participant that
// last ran on the waiter's own core needs that core to make progress: then the waiter yields at
// once. After spin_patience it goes on to yield rounds and then blocks.
constexpr auto spin_patience = std::chrono::microseconds(200);
// Yield rounds end after yield_patience too: on a machine busy with other processes one yield can
// hand the core away for a whole time slice (milliseconds), and blocking costs only a wake-up.
constexpr auto yield_patience = std::chrono::microseconds(50);
constexpr int polls_per_cpu_check = 4;
constexpr int polls_per_clock_read = 64;
}  // namespace

bool World::test(int rank, const std::shared_ptr<Op>& op) {
  const auto inside = in_fabric(rank);
  const double entered = observers_.wait_started(rank);
  auto s = op->state.load(std::memory_order_acquire);
  if (s == Op::State::ready) {
    execute_chunk(*op);
    s = op->state.load(std::memory_order_acquire);
  }
  if (deterministic() &&
      (s == Op::State::gathering || ranks_[static_cast<std::size_t>(rank)].owes_yield)) {
    // Polling is a communication point: let the others run, or a polling loop would spin forever.
    std::unique_lock lock(mutex_);
    yield(lock, rank);
    s = op->state.load(std::memory_order_acquire);
  }
  if (s == Op::State::failed) std::rethrow_exception(op->error);
  if (s == Op::State::done) observers_.waited(rank, *op, entered);
  return s == Op::State::done;
}

void World::wait(int rank, const std::shared_ptr<Op>& op,
                 std::optional<std::chrono::milliseconds> limit, bool waits_to_timeout) {
  if (deterministic()) wait_deterministic(rank, op, limit, waits_to_timeout);
  else wait_concurrent(rank, op, limit, waits_to_timeout);
}

// Spins on `op` (see spin_patience), helping with its chunks; whether it finished meanwhile.
bool World::spin(int rank, Op& op) {
  RankState& me = ranks_[static_cast<std::size_t>(rank)];
  // Read once: the loop must not poll the op's first cache line, which arriving ranks write.
  const std::span<const int> participants = op.participants;
  const auto until = std::chrono::steady_clock::now() + spin_patience;
  for (int polls = 1;; ++polls) {
    const Poll p = poll(op);
    if (p == Poll::finished) return true;
    if (p == Poll::worked) continue;
    if (polls % polls_per_clock_read == 0 && std::chrono::steady_clock::now() > until) return false;
    if (polls % polls_per_cpu_check != 0) {
      cpu_relax();
      continue;
    }
    const int cpu = sched_getcpu();
    if (me.cpu.load(std::memory_order_relaxed) != cpu) me.cpu.store(cpu, std::memory_order_relaxed);
    // An any_source recv's sender is written when a send matches it: not read here.
    const bool shared =
        !op.any_source && std::any_of(participants.begin(), participants.end(), [&](int r) {
          return r != rank &&
                 ranks_[static_cast<std::size_t>(r)].cpu.load(std::memory_order_relaxed) == cpu;
        });
    if (shared) std::this_thread::yield();
    else cpu_relax();
  }
}

// Polls `op` between yields, yield_rounds_ times or for yield_patience; whether it finished
// meanwhile.
bool World::poll_and_yield(Op& op) {
  const auto until = std::chrono::steady_clock::now() + yield_patience;
  for (int round = 0, polls = 0; round < yield_rounds_;) {
    const Poll p = poll(op);
    if (p == Poll::finished) return true;
    if (p == Poll::worked) continue;  // progress: keep helping
    // In an oversubscribed world, a rank whose op only waits for the last chunks blocks at once:
    // the ranks running them need the cores more than it needs to notice early.
    if (p == Poll::claimed && !spare_cores_) return false;
    if (++polls % polls_per_yield_ == 0) {
      std::this_thread::yield();
      ++round;
      if (std::chrono::steady_clock::now() > until) return false;
    }
  }
  return false;
}

void World::wait_concurrent(int rank, const std::shared_ptr<Op>& op,
                            std::optional<std::chrono::milliseconds> limit, bool waits_to_timeout) {
  if (poll(*op) == Poll::finished) return;
  OpPool::release_retired();  // while the others are still coming
  // A reconfigure round (sim/membership.cpp) completes under the lock alone: nothing to help with.
  if (!op->comm->rendezvous && ((spare_cores_ && spin(rank, *op)) || poll_and_yield(*op))) return;
  RankState& me = ranks_[static_cast<std::size_t>(rank)];
  auto lock = lock_fabric();
  const auto timeout = within(limit, cluster_.timeout);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto s = op->state.load(std::memory_order_acquire);
    if (s == Op::State::done) return;
    if (s == Op::State::failed) {
      const auto error = op->error;
      lock.unlock();
      std::rethrow_exception(error);
    }
    if (auto other = next_runnable()) {
      lock.unlock();
      while (execute_chunk(*other)) {
      }
      lock.lock();
      continue;
    }
    me.waiting_on = op;
    me.waits_to_timeout = waits_to_timeout;
    ++blocked_;
    me.blocked.store(true);
    // A last look after raising the flag: a rank completing or failing the op without the lock
    // changed its state before it looked at the flag (wake(), executor.cpp).
    const auto last = op->state.load();
    if (last == Op::State::done || last == Op::State::failed) {
      me.blocked.store(false);
      --blocked_;
      me.waiting_on = nullptr;
      continue;
    }
    if (last == Op::State::gathering) check_deadlock();
    std::cv_status status = std::cv_status::no_timeout;
    if (me.blocked) status = me.cv.wait_until(lock, deadline);
    if (me.blocked) {
      me.blocked = false;
      --blocked_;
    }
    me.waiting_on = nullptr;
    if (status == std::cv_status::timeout && op->state.load() == Op::State::gathering)
      fail_on_timeout(op, rank, timeout);
  }
}

}  // namespace dist::sim
