// How many calls a timed batch holds, chosen by the same rule for our backends and the baselines.
#pragma once

#include <algorithm>

namespace dist::bench {

// Batches of 1, 10, 100, ... calls are timed (time_batch(reps) returns seconds) until one lasts a
// tenth of `target_s`; the size is then scaled to last about `target_s`. Sizing from a single call
// would let one slow call (a rank thread waking up late on a busy machine) make batches so short
// that their start, not the operation, is what gets measured.
template <class TimeBatch> int batch_size(TimeBatch&& time_batch, double target_s,
                                          int max_reps = 20000) {
  int reps = 1;
  double t = time_batch(reps);
  while (t < target_s / 10 && reps < max_reps) {
    reps = std::min(max_reps, reps * 10);
    t = time_batch(reps);
  }
  return std::clamp(static_cast<int>(target_s * reps / std::max(t, 1e-9)), 1, max_reps);
}

}  // namespace dist::bench
