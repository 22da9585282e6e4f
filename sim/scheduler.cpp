// The deterministic scheduler: a baton passed by a seeded generator lets one rank run at a time
// (a fiber resumed, or a thread woken); time is virtual, so stalls and timeouts are free. When no
// rank can run, the virtual clock jumps to the next stall end or wait deadline, and when none is
// pending the blocked ranks are a deadlock (failure_detector.cpp).
#include <algorithm>
#include <limits>
#include <thread>

#include "dist/errors.hpp"
#include "sim/fibers.hpp"
#include "sim/spin.hpp"
#include "sim/world.hpp"

namespace dist::sim {

namespace {
constexpr double step_us = 1.0;  // virtual time a rank spends between two communication points
}  // namespace

void World::wait_deterministic(int rank, const std::shared_ptr<Op>& op,
                               std::optional<std::chrono::milliseconds> limit,
                               bool waits_to_timeout) {
  const auto inside = in_fabric(rank);
  const double entered = observers_.wait_started(rank);
  std::unique_lock lock(mutex_);
  RankState& me = ranks_[static_cast<std::size_t>(rank)];
  for (;;) {
    const auto s = op->state.load(std::memory_order_acquire);
    if (s == Op::State::done) {
      if (me.owes_yield) yield(lock, rank);  // the switch its post left to here (post_collective)
      observers_.waited(rank, *op, entered);
      return;
    }
    if (s == Op::State::failed) {
      const auto error = op->error;
      lock.unlock();
      std::rethrow_exception(error);
    }
    me.blocked = true;
    me.owes_yield = false;  // blocking passes the baton
    refresh_ready(rank);
    me.waiting_on = op;
    const auto timeout = within(limit, cluster_.timeout);
    me.deadline_us = virtual_us_ + std::chrono::duration<double, std::micro>(timeout).count();
    me.wait_limit = limit;
    me.waits_to_timeout = waits_to_timeout;
    ++blocked_;
    pass_baton();
    await_baton(lock, rank);
    if (me.blocked) {
      me.blocked = false;
      --blocked_;
      refresh_ready(rank);
    }
    me.waiting_on = nullptr;
    me.wait_limit.reset();
  }
}

void World::sleep(std::unique_lock<std::mutex>& lock, int rank, std::chrono::milliseconds delay) {
  if (!deterministic()) {
    lock.unlock();
    std::this_thread::sleep_for(delay);
    lock.lock();
    return;
  }
  const double delay_us = std::chrono::duration<double, std::micro>(delay).count();
  if (model::Predictor* p = predictor()) p->add_compute(rank, delay_us);  // compute meanwhile
  RankState& me = ranks_[static_cast<std::size_t>(rank)];
  me.sleep_until_us = virtual_us_ + delay_us;
  next_wake_us_ = std::min(next_wake_us_, *me.sleep_until_us);
  refresh_ready(rank);
  pass_baton();
  await_baton(lock, rank);
}

bool World::wake_sleepers() {
  bool woke = false;
  next_wake_us_ = std::numeric_limits<double>::infinity();
  for (int r = 0; r < size(); ++r) {
    RankState& s = ranks_[static_cast<std::size_t>(r)];
    if (!s.sleep_until_us) continue;
    if (*s.sleep_until_us > virtual_us_) {
      next_wake_us_ = std::min(next_wake_us_, *s.sleep_until_us);
      continue;
    }
    s.sleep_until_us.reset();
    refresh_ready(r);
    woke = true;
  }
  return woke;
}

void World::prefetch_rank(int rank) const {
  prefetch_lines(&ranks_[static_cast<std::size_t>(rank)], sizeof(RankState), true);
}

// A guess, not a lookup in the ready set (whose tree a large world's scheduler would miss too).
int World::upcoming(int rank) const {
  if (predictor() || stretch_ <= 1) return -1;
  return rank + 1 < size() ? rank + 1 : 0;
}

void World::enter(int rank) {
  op_pool_.bind(rank);
  std::unique_lock lock(mutex_);
  ranks_[static_cast<std::size_t>(rank)].started = true;
  ++started_;
  refresh_ready(rank);
  if (!deterministic()) return;
  if (started_ == size() && baton_ < 0) pass_baton();
  await_baton(lock, rank);
  if (model::Predictor* p = predictor()) p->resume(rank);
}

void World::yield(std::unique_lock<std::mutex>& lock, int rank) {
  if (!deterministic()) return;
  ranks_[static_cast<std::size_t>(rank)].owes_yield = false;  // any switch owed is this one
  pass_baton();
  await_baton(lock, rank);
}

void World::await_baton(std::unique_lock<std::mutex>& lock, int rank) {
  if (fibers_) {
    while (baton_ != rank) {  // the scheduler resumes the rank the baton names
      lock.unlock();
      fibers_->suspend();
      lock.lock();
    }
    return;
  }
  RankState& me = ranks_[static_cast<std::size_t>(rank)];
  me.cv.wait(lock, [&] { return baton_ == rank; });
}

int World::baton() const {
  std::lock_guard lock(mutex_);
  return baton_;
}

void World::check_thread(int rank) const {
  if (!fibers_ || fibers_->on_own_thread()) return;
  throw InvalidArgument(
      "rank " + std::to_string(rank) +
      ": called from a helper thread (ScopedRank) in a deterministic run, whose ranks are fibers "
      "of one thread: the helper could never be scheduled while its rank blocks the thread. Set "
      "Cluster::fibers = false to run the ranks as threads");
}

void World::refresh_ready(int rank) {
  if (!deterministic()) return;
  const RankState& s = ranks_[static_cast<std::size_t>(rank)];
  const bool ready = s.started && !s.finished && !s.blocked && !s.sleep_until_us;
  ready_.set(rank, ready);
  if (model::Predictor* p = predictor()) p->set_ready(rank, ready);
}

// Chooses the next rank to run from the seeded generator, among the ranks that can run now. When
// none can, advances the virtual clock to the next stall end or wait deadline, or, when nothing is
// pending at all, declares the deadlock so the blocked ranks get their errors.
void World::pass_baton() {
  virtual_us_ += step_us;
  if (virtual_us_ >= next_wake_us_) wake_sleepers();  // their time passed while others ran
  for (;;) {
    if (!ready_.empty()) {
      baton_ = pick_ready();
      if (!fibers_) ranks_[static_cast<std::size_t>(baton_)].cv.notify_one();
      return;
    }
    if (advance_virtual_clock()) continue;
    if (blocked_ == 0) {
      baton_ = -1;  // every rank has finished
      return;
    }
    const int before = blocked_;
    check_deadlock();
    if (blocked_ == before) {  // cannot happen: a full deadlock always fails the blocked ranks
      baton_ = -1;
      return;
    }
  }
}

// Up to 1,024 ranks, a rank drawn uniformly from the seed among the ready ones. A larger world
// runs stretches of consecutive ready ranks (in rank order, from the one passing the baton)
// between such draws, each stretch's length drawn too (on average ranks / 1,024): every rank can
// still come next and a seed still replays one order, while the ranks' stacks and states are
// visited mostly in memory order, which makes a switch cheaper in large worlds (bench/sim_scale
// measures it: docs/benchmarks.md).
int World::pick_ready() {
  // Predicting: the rank with the earliest clock, so the model sees calls in time order (the
  // predictor's ready ranks are ready_'s, both kept by refresh_ready).
  if (model::Predictor* p = predictor()) return p->earliest_ready();
  if (stretch_ > 1 && baton_ >= 0 && stretch_left_ > 0) {
    --stretch_left_;
    return ready_.kth(ready_.below(baton_ + 1) % ready_.size());
  }
  std::uniform_int_distribution<std::size_t> pick(0, ready_.size() - 1);
  const int next = ready_.kth(pick(schedule_rng_));
  if (stretch_ > 1)
    stretch_left_ = std::uniform_int_distribution<int>(0, 2 * stretch_ - 2)(schedule_rng_);
  return next;
}

// Moves virtual time to the earliest stall end or wait deadline and applies it. Returns false
// when there is no such event.
bool World::advance_virtual_clock() {
  const bool any_sleeper = std::any_of(ranks_.begin(), ranks_.end(), [](const RankState& s) {
    return s.sleep_until_us.has_value();
  });
  // Every rank blocked and none asleep: a deadlock, not a wait, unless some wait in a monitored
  // barrier; then only those waits end.
  const bool stuck = !any_sleeper && blocked_ + finished_ == size();
  const auto times_out = [stuck](const RankState& s) {
    return s.blocked && s.waiting_on && s.waiting_on->state.load() == Op::State::gathering &&
           (!stuck || s.waits_to_timeout);
  };
  double next = std::numeric_limits<double>::infinity();
  for (const auto& s : ranks_) {
    if (s.sleep_until_us) next = std::min(next, *s.sleep_until_us);
    if (times_out(s)) next = std::min(next, s.deadline_us);
  }
  if (next == std::numeric_limits<double>::infinity()) return false;
  virtual_us_ = std::max(virtual_us_, next);
  if (wake_sleepers()) return true;  // a woken rank may still arrive before anyone's deadline
  for (int r = 0; r < size(); ++r) {
    const RankState& s = ranks_[static_cast<std::size_t>(r)];
    if (times_out(s) && s.deadline_us <= virtual_us_)
      fail_on_timeout(s.waiting_on, r, within(s.wait_limit, cluster_.timeout));
  }
  return true;
}

}  // namespace dist::sim
