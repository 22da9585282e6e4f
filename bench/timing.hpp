// How dist times a distributed operation, the rules the benchmark suite (bench/) and
// dist_calibrate share: a batch of calls timed on every rank, started together, the slowest
// rank's time; and how many calls a batch holds.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "dist/api.hpp"
#include "dist/collectives.hpp"

namespace dist::bench {

// Batches of 1, 10, 100, ... calls are timed (time_batch(reps) returns seconds) until one lasts a
// tenth of `target_s`; the size is then scaled to last about `target_s`. Sizing from a single call
// would let one slow call (a rank thread waking up late on a busy machine) make batches so short
// that their start, not the operation, is what gets measured.
template <class TimeBatch>
int batch_size(TimeBatch&& time_batch, double target_s, int max_reps = 20000) {
  int reps = 1;
  double t = time_batch(reps);
  while (t < target_s / 10 && reps < max_reps) {
    reps = std::min(max_reps, reps * 10);
    t = time_batch(reps);
  }
  return std::clamp(static_cast<int>(target_s * reps / std::max(t, 1e-9)), 1, max_reps);
}

// The slowest rank's seconds for `reps` calls of `op` on every rank of the world, started
// together from a barrier (the same value on every rank).
template <class Op>
double slowest_rank_seconds(Op&& op, int reps) {
  dist::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) op();
  std::vector<double> t{
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  dist::all_reduce(t, dist::ReduceOp::max);
  return t[0];
}

}  // namespace dist::bench
