// dist_recovery: how long a gloo job takes to go on after a rank's process is killed with SIGKILL.
// Run it under distrun (`distrun -n 4 --max-restarts 1 -- dist_recovery`): every rank all_reduces
// step after step; at step 5 rank 2 notes the time and kills itself; each survivor catches the
// RankFailure naming it, shrinks the world without it (shrink_group, abort_parent) and all_reduces
// in the new group. Rank 0 prints the time from the kill to that all_reduce's end, split into
// detection (the kill to the RankFailure), the shrink, and the first all_reduce. Every survivor
// checks the sums (the world's before the kill, the survivors' after) and exits non-zero on a wrong
// one. distrun restarts rank 2 (--max-restarts keeps the others running); its replacement exits at
// once, as gloo cannot let it back in yet (dist::reconfigure).
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/init.hpp"

namespace {

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC: one clock for every process here

constexpr int victim = 2;
constexpr int kill_step = 5;
constexpr int steps = 10;

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

}  // namespace

int main() {
  if (dist::restart_count() > 0) {
    std::printf("replacement (restart %d): exits, gloo cannot let it back in yet\n",
                dist::restart_count());
    return 0;
  }
  dist::init_dist("pytorch", dist::Backend::gloo);
  const int rank = dist::get_rank();
  const int n = dist::get_world_size();
  if (n <= victim) {
    std::fprintf(stderr, "dist_recovery: needs at least %d ranks, got %d\n", victim + 1, n);
    return 2;
  }
  dist::Group group;  // the world, then the survivors
  std::int64_t detected = 0, shrunk = 0, done = 0;
  int members = n;
  bool wrong = false;
  for (int step = 0; step < steps; ++step) {
    if (rank == victim && step == kill_step) {
      std::ofstream(stamp_path()) << now_ns() << "\n";
      ::raise(SIGKILL);
    }
    std::vector<std::int64_t> v{rank + 1};
    try {
      dist::all_reduce(v, dist::ReduceOp::sum, group);
    } catch (const dist::RankFailure& lost) {
      detected = now_ns();
      group = dist::shrink_group(group, {dist::get_group_rank(group, lost.failed_rank())},
                                 {.abort_parent = true});
      shrunk = now_ns();
      members = dist::get_world_size(group);
      v = {rank + 1};
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      done = now_ns();
    }
    std::int64_t want = group.is_default() ? static_cast<std::int64_t>(n) * (n + 1) / 2 : 0;
    if (!group.is_default())
      for (const int r : group.ranks()) want += r + 1;
    if (v[0] != want) {
      std::fprintf(stderr, "dist_recovery: rank %d step %d: sum %lld, expected %lld\n", rank, step,
                   static_cast<long long>(v[0]), static_cast<long long>(want));
      wrong = true;
    }
  }
  if (rank == 0) {
    std::int64_t killed = 0;
    std::ifstream(stamp_path()) >> killed;
    if (!killed || !done) {
      std::fprintf(stderr, "dist_recovery: rank %d's loss was never seen\n", victim);
      wrong = true;
    } else {
      std::printf(
          "recovery: kill -9 of rank %d to the survivors' first all_reduce without it: %.1f ms "
          "(detection %.1f ms, shrink_group %.1f ms, all_reduce %.1f ms; %d of %d ranks go on)\n",
          victim, ms_between(killed, done), ms_between(killed, detected),
          ms_between(detected, shrunk), ms_between(shrunk, done), members, n);
      std::remove(stamp_path().c_str());
    }
  }
  dist::destroy_dist();
  return wrong ? 1 : 0;
}
