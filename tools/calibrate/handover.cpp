// The hand-over measurement of dist_calibrate: a parent and a forked child on one core.
#include "tools/calibrate/handover.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <string>

#include "dist/errors.hpp"
#include "tools/calibrate/launch.hpp"

namespace dist::calibrate {

namespace {
using Clock = std::chrono::steady_clock;
constexpr int turns = 20'000;

struct Shared {
  std::atomic<int> turn{0};       // whose turn: 0 the parent, 1 the child
  std::atomic<bool> gone{false};  // set by a side that ran out of time
};

Error failure(const std::string& what) {
  return Error(ErrorCode::backend, "dist_calibrate: measuring the hand-over: " + what + " (" +
                                       std::strerror(errno) + ")");
}

// Takes `turns` turns as side `me`; false past `deadline` or when the other side gave up.
bool take_turns(Shared& s, int me, Clock::time_point deadline) {
  const auto late = [&] {
    if (Clock::now() <= deadline && !s.gone.load()) return false;
    s.gone.store(true);
    return true;
  };
  for (int i = 0; i < turns; ++i) {
    if (i % 256 == 0 && late()) return false;
    for (int spins = 1; s.turn.load(std::memory_order_acquire) != me; ++spins) {
      sched_yield();
      if (spins % 64 == 0 && late()) return false;
    }
    s.turn.store(1 - me, std::memory_order_release);
  }
  return true;
}

// One run: the microseconds per hand-over, or -1 past the deadline.
double one_run(Shared& s, Clock::time_point deadline) {
  s.turn.store(0);
  const pid_t child = fork();
  if (child < 0) throw failure("fork failed");
  if (child == 0) _exit(take_turns(s, 1, deadline) ? 0 : 1);
  const auto t0 = Clock::now();
  const bool done = take_turns(s, 0, deadline);
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  if (!done || wait_for(child, std::max(left, 1.0)) != 0) {
    kill(child, SIGKILL);
    wait_for(child, 5);
    return -1;
  }
  return us / (2.0 * turns);
}
}  // namespace

double measure_handover_us(double limit_s) {
  // The caller's affinity and the shared page, given back however this ends.
  struct Held {
    cpu_set_t affinity;
    void* page = MAP_FAILED;
    ~Held() {
      if (page != MAP_FAILED) munmap(page, sizeof(Shared));
      sched_setaffinity(0, sizeof affinity, &affinity);
    }
  };
  Held held;
  if (sched_getaffinity(0, sizeof held.affinity, &held.affinity) != 0)
    throw failure("sched_getaffinity failed");
  int cpu = sched_getcpu();
  if (cpu < 0 || !CPU_ISSET(cpu, &held.affinity))
    for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &held.affinity); ++cpu) {
    }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0)
    throw failure("cannot pin to cpu " + std::to_string(cpu));
  held.page =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (held.page == MAP_FAILED) throw failure("mmap of the shared flag failed");
  auto* shared = new (held.page) Shared;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(limit_s));
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const double us = one_run(*shared, deadline);
    if (us < 0)
      throw TimeoutError("dist_calibrate: measuring the hand-over between two processes on cpu " +
                         std::to_string(cpu) + " did not finish within " + std::to_string(limit_s) +
                         " s");
    best = run == 0 ? us : std::min(best, us);
  }
  return best;
}

}  // namespace dist::calibrate
