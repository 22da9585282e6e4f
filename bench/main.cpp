// dist_bench: registers the suite for the chosen profile (--profile=smoke|full, or the
// DIST_BENCH_PROFILE environment variable; smoke by default), runs it and closes the worlds.
// The real backends come from the registry: nccl joins where there is a GPU, in worlds of up to
// one rank per GPU (one rank on a single GPU).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "bench/register.hpp"
#include "real/registry.hpp"

namespace dist::bench {

// Benchmarks that ended in an error: dist_bench then exits 1 (Google Benchmark itself exits 0).
std::atomic<int> failed_benchmarks{0};

namespace {
// `fn` registered as `name`: manual time in microseconds; an error fails the benchmark (counted)
// and closes the world it ran on.
benchmark::internal::Benchmark* register_one(const std::string& name,
                                             std::function<void(benchmark::State&)> fn) {
  return benchmark::RegisterBenchmark(
             name.c_str(),
             [name, fn = std::move(fn)](benchmark::State& state) {
    set_running_benchmark(name);
    try {
      fn(state);
    } catch (const std::exception& e) {
      ++failed_benchmarks;
      state.SkipWithError(e.what());
      close_worlds();  // a failed world is not reused
    }
             })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}
}  // namespace

void add_benchmark(const std::string& name, std::function<void(benchmark::State&)> fn,
                   double min_time) {
  register_one(name, std::move(fn))->MinTime(min_time > 0 ? min_time : min_time_s());
}

void add_fixed_benchmark(const std::string& name, std::function<void(benchmark::State&)> fn,
                         int iterations) {
  register_one(name, std::move(fn))->Iterations(iterations);
}

}  // namespace dist::bench

namespace {
// Removes --profile=... from argv (Google Benchmark rejects flags it does not know).
dist::bench::Profile take_profile(int& argc, char** argv) {
  std::string value;
  if (const char* env = std::getenv("DIST_BENCH_PROFILE")) value = env;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--profile=", 10) == 0) value = argv[i] + 10;
    else argv[kept++] = argv[i];
  }
  argc = kept;
  if (value.empty() || value == "smoke") return dist::bench::Profile::smoke;
  if (value == "full") return dist::bench::Profile::full;
  std::cerr << "dist_bench: unknown profile '" << value << "' (smoke or full)\n";
  std::exit(2);
}
}  // namespace

int main(int argc, char** argv) {
  using namespace dist::bench;
  set_profile(take_profile(argc, argv));
  register_memcpy();
  register_collectives(Backend::sim);
  register_helpers(Backend::sim);
  // The real backends of the registry whose ranks can be threads of this process; mpi's ranks
  // are processes (dist_mpi_bench and dist_mpi_pairs, under mpirun).
  for (const dist::real::BackendEntry* entry : dist::real::registered_backends()) {
    if (!entry->threads) continue;
    const std::string name(dist::to_string(entry->kind));
    if (const std::string why = entry->unavailable(1); !why.empty()) {
      std::cerr << "dist_bench: " << name << " not benchmarked: " << why << "\n";
      continue;
    }
    if (const std::string why = entry->unavailable(2); !why.empty())
      std::cerr << "dist_bench: " << name << " on worlds of one rank only (" << why
                << "): busbw is 0 by definition, the times are the cost of a call\n";
    register_collectives(entry->kind);
    register_helpers(entry->kind);
    if (entry->kind == Backend::nccl) register_raw_nccl();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("dist_profile", profile() == Profile::smoke ? "smoke" : "full");
  benchmark::RunSpecifiedBenchmarks();
  close_worlds();
  benchmark::Shutdown();
  if (const int failed = failed_benchmarks.load(); failed > 0) {
    std::cerr << "dist_bench: " << failed << " benchmark run(s) ended in an error (ERROR OCCURRED"
              << " above)\n";
    return 1;
  }
  return 0;
}
