// The benchmark harness: a persistent world of rank threads per (backend, size) that runs timed
// batches of an operation, the sizes of each profile, and the nccl-tests bandwidth counters.
#pragma once

#include <benchmark/benchmark.h>

#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dist/detail/erased.hpp"
#include "dist/tensor.hpp"
#include "dist/types.hpp"

namespace dist::bench {

enum class Profile { smoke, full };
Profile profile();
void set_profile(Profile p);

// Message sizes in bytes (8 B .. 256 MiB in the full profile).
std::vector<std::size_t> sizes();
std::vector<int> world_sizes();
// The minimum measured time per benchmark for the current profile.
double min_time_s();
// The minimum time of a paired benchmark (measure_pair): longer, as it is a ratio with a goal
// of 10%.
double pair_min_time_s();

// A world runs on the simulated cluster or on a real backend of the registry whose ranks can be
// threads (gloo; nccl with rank r on GPU r and its buffers in that GPU's memory). Each rank of a
// gloo world also calls Gloo's own API on its backend's Gloo context for the baseline: the same
// operation on the same connections, without our layer.
using dist::Backend;
// The world sizes `backend` is benchmarked at in this profile and on this machine: every size
// for sim; for a real backend the sizes it can run here (2 and 4 in the smoke profile), or a
// world of one rank where that is all it can run (one GPU: the cost of a call).
std::vector<int> world_sizes_for(Backend backend);

// The raw Gloo handles of a gloo world's ranks (raw_gloo_bench.cpp; empty without gloo).
struct RawGlooRanks;
std::shared_ptr<RawGlooRanks> make_raw_gloo_ranks(int n);
// Takes `rank`'s Gloo context from its world backend, runs `body`, then lets go of it; with no
// ranks (a world of another backend) runs `body` alone.
void with_raw_gloo(RawGlooRanks* ranks, int rank, const std::function<void()>& body);

// Per-rank scratch buffers kept across benchmarks so page faults are paid once: host vectors,
// or (nccl worlds) tensors on the rank's GPU.
struct RankBuffers {
  std::vector<float> in;
  std::vector<float> out;
  Device device = Device::cpu();
  Tensor device_in;
  Tensor device_out;
  void reserve(std::size_t in_count, std::size_t out_count, int rank);
  // `count` floats of in / out from element `offset`, wherever the buffers are.
  detail::BufferRef in_ref(std::size_t offset, std::size_t count);
  detail::BufferRef out_ref(std::size_t offset, std::size_t count);
};

// One world of `n` ranks on its own threads, waiting for jobs between benchmarks.
class BenchWorld {
 public:
  BenchWorld(Backend backend, int n);
  ~BenchWorld();
  BenchWorld(const BenchWorld&) = delete;
  BenchWorld& operator=(const BenchWorld&) = delete;

  Backend backend() const { return backend_; }
  int size() const { return n_; }
  RankBuffers& buffers(int rank) { return buffers_[static_cast<std::size_t>(rank)]; }
  RawGlooRanks* raw_gloo() { return raw_gloo_.get(); }  // gloo worlds only

  // Runs job(rank) on every rank and returns when all have finished; rethrows a rank's error.
  void run(const std::function<void(int rank)>& job);
  // Runs `reps` calls of op(rank) on every rank from a common start and returns the time of
  // the slowest rank, in seconds.
  double time_batch(const std::function<void(int rank)>& op, int reps);
  // Runs `reps` calls each of op(rank) and base(rank) on every rank, alternating (op, base, base,
  // op, op, base, ...; base first: the other way round), after one untimed call that absorbs the
  // ranks' arrival at the start, and returns the time each rank spent in each, the slowest's.
  struct PairTimes {
    double op_s = 0;
    double base_s = 0;
  };
  PairTimes time_alternating(const std::function<void(int rank)>& op,
                             const std::function<void(int rank)>& base, int reps, bool base_first);

 private:
  void rank_loop(int rank);

  Backend backend_;
  int n_;
  std::vector<RankBuffers> buffers_;
  std::shared_ptr<RawGlooRanks> raw_gloo_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t generation_ = 0;
  int done_ = 0;
  bool stop_ = false;
  const std::function<void(int)>* job_ = nullptr;
  std::vector<std::exception_ptr> errors_;
  std::exception_ptr launch_error_;
  std::thread launcher_;
};

// The world for (backend, n): reuses the current one when it matches, else replaces it.
BenchWorld& world_for(Backend backend, int n);
void close_worlds();

// How the bandwidth of a collective is counted (nccl-tests): bus bandwidth = algbw × factor.
double bus_factor(const std::string& op, int n);
// The counters of a benchmark of `calls` calls on `ranks` ranks that took `total` seconds: ranks,
// calls, and where `bytes` move per call, algbw, busbw (GB/s, as `op_name` counts them) and bytes.
void set_counters(benchmark::State& state, int ranks, std::int64_t calls, double total,
                  double bytes, const std::string& op_name);

// The benchmark about to run (add_benchmark sets it): measure() sizes a benchmark's batches once,
// on its first run, so Google Benchmark's iteration-count trials and --benchmark_repetitions all
// run the same batch size (its statistics require every repetition to report the same iteration
// count, and a batch always completes).
void set_running_benchmark(const std::string& name);

// Times `op` on every rank of `world` for the benchmark `state` (manual time, the slowest rank),
// in batches sized (once per benchmark) to last about two milliseconds, and sets algbw/busbw counters
// (GB/s) for `bytes` moved per call (0: no bandwidth counters).
void measure(benchmark::State& state, BenchWorld& world, const std::function<void(int)>& op,
             double bytes, const std::string& op_name);

// Times `op` against the baseline's `base` on the same ranks, call by call alternating
// (time_alternating), so that both meet the machine's fast and slow moments alike: on 2 cores a
// 20 ms window of Gloo over loopback moves several-fold, far more than the 10% a ratio is judged
// by. The manual time is `op`'s. Counters: base_us (the baseline's time per call), ratio (the
// median over batches of op's time over the baseline's), ratio_total (the sums' ratio), pairs
// (batches), and `op`'s bandwidth counters.
void measure_pair(benchmark::State& state, BenchWorld& world, const std::function<void(int)>& op,
                  const std::function<void(int)>& base, double bytes, const std::string& op_name);

}  // namespace dist::bench
