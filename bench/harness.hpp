// The benchmark harness: a persistent world of rank threads per (backend, size) that runs timed
// batches of an operation, the sizes of each profile, and the nccl-tests bandwidth counters.
#pragma once

#include <benchmark/benchmark.h>

#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dist::bench {

enum class Profile { smoke, full };
Profile profile();
void set_profile(Profile p);

// Message sizes in bytes (8 B .. 256 MiB in the full profile).
std::vector<std::size_t> sizes();
std::vector<int> world_sizes();
// The minimum measured time per benchmark for the current profile.
double min_time_s();

// The backends a world can run on: the simulated cluster, our gloo backend with ranks as
// threads, or Gloo's own API without our layer (the baseline of the gloo backend).
enum class Backend { sim, gloo, raw_gloo };
const char* backend_name(Backend b);
bool gloo_available();
// Runs fn(rank) on n threads, each with a raw Gloo context connected over loopback TCP
// (raw_gloo_bench.cpp); raw_gloo_context(rank) is that rank's context while fn runs.
void run_raw_gloo_ranks(int n, std::chrono::milliseconds timeout,
                        const std::function<void(int rank)>& fn);

// Per-rank scratch buffers kept across benchmarks so page faults are paid once.
struct RankBuffers {
  std::vector<float> in;
  std::vector<float> out;
  void reserve(std::size_t in_count, std::size_t out_count, int rank);
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

  // Runs job(rank) on every rank and returns when all have finished; rethrows a rank's error.
  void run(const std::function<void(int rank)>& job);
  // Runs `reps` calls of op(rank) on every rank from a common start and returns the time of
  // the slowest rank, in seconds.
  double time_batch(const std::function<void(int rank)>& op, int reps);

 private:
  void rank_loop(int rank);

  Backend backend_;
  int n_;
  std::vector<RankBuffers> buffers_;
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

}  // namespace dist::bench
