// Benchmarks whose ranks are processes (the OpenMPI baseline, dist's process backends): a timed
// result per operation, measured by the same batch rule as dist_bench on the slowest rank, and
// written by rank 0 as Google Benchmark JSON for bench/report.py.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "bench/timing.hpp"
#include "dist/bench/bus_bandwidth.hpp"

namespace dist::bench {

struct ProcResult {
  std::string name;
  double seconds_per_call = 0;
  long long calls = 0;
  double bytes = 0;       // moved per call (0: no bandwidth counters)
  double bus_factor = 1;  // nccl-tests' busbw factor of the operation at this world size
};

// Batches of about 2 ms until `min_time` seconds are measured; `slowest(reps)` times a batch of
// `reps` calls on every rank and returns the slowest rank's seconds (the same on every rank).
template <class Slowest>
ProcResult measure_batches(const std::string& name, Slowest&& slowest, double min_time,
                           double bytes = 0, double bus_factor = 1) {
  slowest(1);  // warm-up
  const int reps = batch_size(slowest, 2e-3);
  double total = 0;
  long long calls = 0;
  int batches = 0;
  while (total < min_time || batches < 3) {
    total += slowest(reps);
    calls += reps;
    ++batches;
  }
  return {name, total / static_cast<double>(calls), calls, bytes, bus_factor};
}

// The results as Google Benchmark JSON (us per call, algbw and busbw where bytes move).
void write_results(std::FILE* f, const std::vector<ProcResult>& results, const char* executable,
                   int ranks, const std::string& profile);

// all_reduce's busbw factor at `n` ranks (nccl-tests).
inline double all_reduce_factor(int n) { return busbw_factor(Pattern::all_reduce, n); }

}  // namespace dist::bench
