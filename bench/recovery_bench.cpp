// dist_recovery: how long a gloo job takes to go on after a rank's process is killed with SIGKILL,
// and how long its replacement takes to join. Run it under distrun (`distrun -n 4 --max-restarts
// 1 -- dist_recovery`): every rank all_reduces step after step; at step 5 rank 2 notes the time and
// kills itself; each survivor catches the RankFailure naming it, reconfigures (the membership
// without it) and all_reduces in the new group. Rank 0 prints the time from the kill to that
// all_reduce's end, split into detection (the kill to the RankFailure), the reconfigure, and the
// first all_reduce. The survivors then go on reconfiguring step after step; distrun restarts rank
// 2, whose replacement pauses 0.5 s (as a restarted machine would take a while), reconfigures to
// join and prints the time from its process's start to its first all_reduce in the job, the pause
// left out. Every rank checks its sums and exits non-zero on a wrong one.
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/init.hpp"

namespace {

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC: one clock for every process here

constexpr int victim = 2;
constexpr int kill_step = 5;
constexpr std::chrono::milliseconds rejoin_pause{500};

double ms_between(std::int64_t from_ns, std::int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) / 1e6;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Where the victim leaves its kill time for the survivors: one file per job (its port).
std::string stamp_path() {
  const char* port = std::getenv("MASTER_PORT");
  return std::string("/tmp/dist_recovery_") + (port ? port : "0") + ".stamp";
}

// The sum every member's {rank + 1} all_reduces to in `group`.
std::int64_t expected_sum(const dist::Group& group) {
  std::int64_t want = 0;
  for (const int r : group.ranks()) want += r + 1;
  return want;
}

bool check(const std::vector<std::int64_t>& v, const dist::Group& group, const char* when) {
  if (v[0] == expected_sum(group)) return true;
  std::fprintf(stderr, "dist_recovery: rank %d %s: sum %lld, expected %lld\n", dist::get_rank(),
               when, static_cast<long long>(v[0]), static_cast<long long>(expected_sum(group)));
  return false;
}

// The replacement: pauses (a restarted machine takes a while: distrun restarts a process within
// milliseconds, before the survivors have gone on without it), then joins by reconfigure and
// all_reduces once with the job. Its time leaves the pause out.
int replacement(std::int64_t started, std::int64_t initialised) {
  std::this_thread::sleep_for(rejoin_pause);
  const std::int64_t resumed = now_ns();
  const dist::Group group = dist::reconfigure();
  const std::int64_t joined = now_ns();
  std::vector<std::int64_t> v{dist::get_rank() + 1};
  dist::all_reduce(v, dist::ReduceOp::sum, group);
  const std::int64_t done = now_ns();
  std::printf(
      "recovery: rank %d's replacement, from its start to its first all_reduce in the job: %.1f ms "
      "without its pause (init_dist %.1f ms, reconfigure %.1f ms, all_reduce %.1f ms; %zu ranks "
      "again)\n",
      dist::get_rank(), ms_between(started, initialised) + ms_between(resumed, done),
      ms_between(started, initialised), ms_between(resumed, joined), ms_between(joined, done),
      group.ranks().size());
  const bool ok = check(v, group, "after joining");
  dist::destroy_dist();
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  const std::int64_t started = now_ns();
  dist::init_dist("pytorch", dist::Backend::gloo);
  if (dist::restart_count() > 0) return replacement(started, now_ns());
  const int rank = dist::get_rank();
  const int n = dist::get_world_size();
  if (n <= victim) {
    std::fprintf(stderr, "dist_recovery: needs at least %d ranks, got %d\n", victim + 1, n);
    return 2;
  }
  dist::Group group;  // the world, then the memberships reconfigure agrees
  std::int64_t detected = 0, reconfigured = 0, done = 0;
  std::size_t members = static_cast<std::size_t>(n);
  bool ok = true;
  for (int step = 0; step <= kill_step && !done; ++step) {
    if (rank == victim && step == kill_step) {
      std::ofstream(stamp_path()) << now_ns() << "\n";
      ::raise(SIGKILL);
    }
    std::vector<std::int64_t> v{rank + 1};
    try {
      dist::all_reduce(v, dist::ReduceOp::sum, group);
    } catch (const dist::RankFailure&) {
      detected = now_ns();
      group = dist::reconfigure(group);
      reconfigured = now_ns();
      members = group.ranks().size();
      v = {rank + 1};
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      done = now_ns();
    }
    ok = check(v, group, "before the replacement") && ok;
  }
  // Step after step until the replacement is back (at most 60 s): the step whose reconfigure
  // lets it in all_reduces with it (its first all_reduce).
  const auto until = Clock::now() + std::chrono::seconds(60);
  while (group.ranks().size() < static_cast<std::size_t>(n) && Clock::now() < until) {
    group = dist::reconfigure(group);
    std::vector<std::int64_t> v{rank + 1};
    dist::all_reduce(v, dist::ReduceOp::sum, group);
    ok = check(v, group, "while the replacement starts") && ok;
  }
  if (group.ranks().size() != static_cast<std::size_t>(n)) {
    std::fprintf(stderr, "dist_recovery: rank %d's replacement never joined\n", victim);
    ok = false;
  }
  if (rank == 0) {
    std::int64_t killed = 0;
    std::ifstream(stamp_path()) >> killed;
    if (!killed || !done) {
      std::fprintf(stderr, "dist_recovery: rank %d's loss was never seen\n", victim);
      ok = false;
    } else {
      std::printf(
          "recovery: kill -9 of rank %d to the survivors' first all_reduce without it: %.1f ms "
          "(detection %.1f ms, reconfigure %.1f ms, all_reduce %.1f ms; %zu of %d ranks go on)\n",
          victim, ms_between(killed, done), ms_between(killed, detected),
          ms_between(detected, reconfigured), ms_between(reconfigured, done), members, n);
      std::remove(stamp_path().c_str());
    }
  }
  dist::destroy_dist();
  return ok ? 0 : 1;
}
