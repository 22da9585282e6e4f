// Google Benchmarks of a user's distributed step: each iteration runs the step once on every rank
// of a simulated cluster or of N forked processes of a real backend and takes the slowest rank's
// time, with nccl-tests' algbw/busbw counters. Header-only; link dist::benchmark.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dist/api.hpp"
#include "dist/bench/bus_bandwidth.hpp"
#include "dist/collectives.hpp"
#include "dist/errors.hpp"
#include "dist/real/spawn.hpp"
#include "dist/sim/run.hpp"
#include "dist/types.hpp"

namespace dist::bench {

// Where and how a distributed benchmark runs. Plain struct: set what differs, e.g.
// {.ranks = 4, .bytes = grad_bytes, .pattern = Pattern::all_reduce}.
struct Options {
  enum class On { sim, processes };
  int ranks = 2;
  On on = On::sim;
  // sim: the cluster (its world size must be `ranks`); empty: one node of `ranks` concurrent
  // ranks with `timeout`. Deterministic schedules run one rank at a time: their times say little.
  std::optional<sim::Cluster> cluster{};
  // processes: the backend each of the `ranks` forked processes initialises (dist::spawn).
  Backend backend = Backend::gloo;
  // Bytes the step moves per iteration: with them, the counters algbw (GB/s, bytes over the
  // slowest rank's mean step time) and, when `pattern` is set, busbw (algbw × its factor).
  std::size_t bytes = 0;
  Pattern pattern = Pattern::none;
  // Untimed steps on every rank before the timed ones (first touch, connections).
  int warmup = 1;
  // How long a rank may wait in a collective (sim's Cluster::timeout, the processes' timeout).
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  // processes: one run of the benchmark function; ranks still running then are killed.
  std::chrono::milliseconds deadline = std::chrono::minutes(10);
};

namespace detail {

// Builds one rank's step on that rank (untimed), e.g. its buffers.
using StepFactory = std::function<std::function<void()>()>;

inline void check(const Options& o) {
  const auto fail = [](const std::string& what) { throw InvalidArgument("dist::bench: " + what); };
  if (o.ranks < 1) fail("ranks must be >= 1, got " + std::to_string(o.ranks));
  if (o.warmup < 0) fail("warmup must be >= 0, got " + std::to_string(o.warmup));
  if (o.timeout.count() <= 0 || o.deadline.count() <= 0)
    fail("timeout and deadline must be positive");
  if (o.on == Options::On::sim && o.cluster && o.cluster->world_size() != o.ranks)
    fail("the cluster has " + std::to_string(o.cluster->world_size()) + " ranks, ranks is " +
         std::to_string(o.ranks));
  if (o.on == Options::On::processes && o.backend == Backend::sim)
    fail("processes run a real backend (gloo, mpi, nccl), not sim");
}

// "<name>/sim/ranks:N" or "<name>/<backend>/processes:N".
inline std::string full_name(const std::string& name, const Options& o) {
  const std::string n = std::to_string(o.ranks);
  if (o.on == Options::On::sim) return name + "/sim/ranks:" + n;
  return name + "/" + std::string(to_string(o.backend)) + "/processes:" + n;
}

inline sim::Cluster cluster_of(const Options& o) {
  if (o.cluster) return *o.cluster;
  sim::Cluster cluster;
  cluster.nodes = 1;
  cluster.ranks_per_node = o.ranks;
  cluster.timeout = o.timeout;
  return cluster;
}

// One rank's side: `warmup` untimed steps, then `iterations` steps, each after a barrier (so
// every rank starts it together) and timed on its own (steady_clock), in seconds.
inline std::vector<double> time_rank(const StepFactory& make_step, std::int64_t iterations,
                                     int warmup) {
  const std::function<void()> step = make_step();
  for (int i = 0; i < warmup; ++i) step();
  std::vector<double> times(static_cast<std::size_t>(iterations));
  for (double& t : times) {
    dist::barrier();
    const auto start = std::chrono::steady_clock::now();
    step();
    t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return times;
}

// Each iteration's time: the slowest rank's.
inline std::vector<double> slowest_per_iteration(const std::vector<std::vector<double>>& ranks) {
  std::vector<double> slowest = ranks.empty() ? std::vector<double>{} : ranks.front();
  for (const auto& times : ranks)
    for (std::size_t i = 0; i < slowest.size() && i < times.size(); ++i)
      slowest[i] = std::max(slowest[i], times[i]);
  return slowest;
}

inline std::vector<double> run_on_sim(const StepFactory& make_step, std::int64_t iterations,
                                      const Options& o) {
  const int warmup = o.warmup;
  return slowest_per_iteration(
      sim::run(cluster_of(o), [&] { return time_rank(make_step, iterations, warmup); }));
}

// A file in the temporary directory that rank 0 of the processes writes the times to, removed
// with this object (a forked rank exits without running destructors).
class TimesFile {
 public:
  TimesFile() {
    std::random_device random;
    const auto tag = (static_cast<std::uint64_t>(random()) << 32) ^ random();
    path_ = std::filesystem::temp_directory_path() / ("dist_bench_" + std::to_string(tag) + ".bin");
  }
  ~TimesFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  TimesFile(const TimesFile&) = delete;
  TimesFile& operator=(const TimesFile&) = delete;

  void write(const std::vector<double>& times) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(times.data()),
              static_cast<std::streamsize>(times.size() * sizeof(double)));
    if (!out) throw BackendError("dist::bench: cannot write the times to " + path_.string());
  }
  std::vector<double> read(std::int64_t iterations) const {
    std::vector<double> times(static_cast<std::size_t>(iterations));
    std::ifstream in(path_, std::ios::binary);
    in.read(reinterpret_cast<char*>(times.data()),
            static_cast<std::streamsize>(times.size() * sizeof(double)));
    if (!in || in.gcount() != static_cast<std::streamsize>(times.size() * sizeof(double)))
      throw BackendError("dist::bench: rank 0 left no times in " + path_.string());
    return times;
  }

 private:
  std::filesystem::path path_;
};

// The processes run every iteration of this call of the benchmark function, decided up front;
// rank 0 takes each iteration's maximum over the ranks (all_reduce max) and writes them.
inline std::vector<double> run_on_processes(const StepFactory& make_step, std::int64_t iterations,
                                            const Options& o) {
  const TimesFile file;
  const int warmup = o.warmup;
  dist::spawn(
      o.ranks,
      [&] {
    std::vector<double> times = time_rank(make_step, iterations, warmup);
    dist::all_reduce(times, ReduceOp::max);
    if (dist::get_rank() == 0) file.write(times);
      },
      SpawnOptions{.backend = o.backend, .timeout = o.timeout, .deadline = o.deadline});
  return file.read(iterations);
}

// algbw and busbw in GB/s of `bytes` moved in `seconds` on `ranks` ranks (0 when nothing moved).
struct Bandwidth {
  double algbw = 0;
  double busbw = 0;
};
inline Bandwidth bandwidth(double bytes, double seconds, Pattern pattern, int ranks) {
  if (bytes <= 0 || seconds <= 0) return {};
  const double algbw = bytes / seconds / 1e9;
  return {algbw, algbw * busbw_factor(pattern, ranks)};
}

inline void set_counters(benchmark::State& state, double total_s, std::int64_t iterations,
                         const Options& o) {
  state.counters["ranks"] = o.ranks;
  if (o.bytes == 0 || iterations == 0) return;
  const auto bw = bandwidth(static_cast<double>(o.bytes), total_s / static_cast<double>(iterations),
                            o.pattern, o.ranks);
  state.counters["bytes"] = static_cast<double>(o.bytes);
  state.counters["algbw"] = bw.algbw;
  if (o.pattern != Pattern::none) state.counters["busbw"] = bw.busbw;
}

// The benchmark function: runs state.max_iterations iterations on the ranks first, then replays
// their times through the benchmark loop as manual time. A failure of any rank (what it threw,
// a timeout, a killed process) is the benchmark's error, with every rank's outcome.
inline void run_benchmark(benchmark::State& state, const StepFactory& make_step, const Options& o) {
  std::vector<double> times;
  try {
    times = o.on == Options::On::sim ? run_on_sim(make_step, state.max_iterations, o)
                                     : run_on_processes(make_step, state.max_iterations, o);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  std::size_t i = 0;
  double total = 0;
  for (auto _ : state) {
    const double t = i < times.size() ? times[i] : 0.0;
    state.SetIterationTime(t);
    total += t;
    ++i;
  }
  set_counters(state, total, static_cast<std::int64_t>(i), o);
}

inline benchmark::internal::Benchmark* register_steps(const std::string& name,
                                                      StepFactory make_step,
                                                      const Options& options) {
  check(options);
  auto body = [make_step = std::move(make_step), options](benchmark::State& state) {
    run_benchmark(state, make_step, options);
  };
  return benchmark::RegisterBenchmark(full_name(name, options).c_str(), std::move(body))
      ->UseManualTime();
}

}  // namespace detail

// Registers the Google Benchmark "<name>/sim/ranks:N" (or "<name>/<backend>/processes:N") whose
// iterations run a step once on every rank and take the slowest rank's time. `fn` is either
//  - the step, a callable returning void: each rank runs its own copy (captured state included,
//    so a mutable lambda owning its buffers is per rank), or
//  - a setup returning the step: called once on each rank, untimed, to build that rank's step.
// Before each iteration the ranks meet in a barrier; the barrier is not timed. Returns the
// benchmark for chaining (->Unit(...), ->Iterations(...)); UseManualTime is set.
// Errors: InvalidArgument for inconsistent options (here); a failing step (any rank throws, a
// collective times out, a process dies) makes the run report the error with every rank's outcome.
// Sim cannot stop a rank that never returns outside dist:: calls; processes past the deadline are
// killed. Processes are forked (dist::spawn): register and run from a single-threaded main.
// Google Benchmark plans iterations from the timed steps alone, so a step far shorter than the
// barrier runs many untimed barriers; each rank keeps 8 bytes per iteration.
template <class F>
benchmark::internal::Benchmark* register_distributed(const std::string& name, F fn,
                                                     const Options& options = {}) {
  if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
    return detail::register_steps(
        name, [fn]() -> std::function<void()> { return fn; }, options);
  } else {
    return detail::register_steps(
        name, [fn]() mutable -> std::function<void()> { return fn(); }, options);
  }
}

}  // namespace dist::bench
