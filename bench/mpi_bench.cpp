// The OpenMPI baseline: MPI_Allreduce (float sum, in place) and MPI_Barrier at the suite's sizes,
// timed like dist_bench (slowest rank, batches of calls) and written as Google Benchmark JSON.
// Run: mpirun --allow-run-as-root --oversubscribe -n N dist_mpi_bench [--profile=full] [--out=F]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/batch_size.hpp"
#include "bench/mpi_timing.hpp"

namespace {

struct Result {
  std::string name;
  double seconds_per_call = 0;
  long long calls = 0;
  double bytes = 0;
};

// Batches of about 2 ms until `min_time` seconds are measured (the same rule on every rank).
template <class Op> Result measure(const std::string& name, Op op, double min_time, double bytes) {
  const auto slowest = [&](int reps) { return dist::bench::slowest_rank_seconds(op, reps); };
  slowest(1);  // warm-up
  const int reps = dist::bench::batch_size(slowest, 2e-3);
  double total = 0;
  long long calls = 0;
  int batches = 0;
  while (total < min_time || batches < 3) {
    total += slowest(reps);
    calls += reps;
    ++batches;
  }
  return {name, total / static_cast<double>(calls), calls, bytes};
}

void write_json(FILE* f, const std::vector<Result>& results, int n, const char* profile) {
  std::fprintf(f, "{\n  \"context\": {\"executable\": \"dist_mpi_bench\", \"num_cpus\": 0, "
                  "\"mpi_ranks\": %d, \"dist_profile\": \"%s\"},\n  \"benchmarks\": [\n", n, profile);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const double us = r.seconds_per_call * 1e6;
    std::fprintf(f,
                 "    {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                 "\"repetitions\": 1, \"repetition_index\": 0, \"threads\": 1, \"iterations\": %lld, "
                 "\"real_time\": %.6f, \"cpu_time\": %.6f, \"time_unit\": \"us\", \"ranks\": %d",
                 r.name.c_str(), r.name.c_str(), r.calls, us, us, n);
    if (r.bytes > 0) {
      const double algbw = r.bytes / r.seconds_per_call / 1e9;
      std::fprintf(f, ", \"bytes\": %.0f, \"algbw\": %.6f, \"busbw\": %.6f", r.bytes, algbw,
                   algbw * 2.0 * (n - 1) / n);
    }
    std::fprintf(f, "}%s\n", i + 1 < results.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  std::string profile = "smoke", out;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--profile=", 10) == 0) profile = argv[i] + 10;
    if (std::strncmp(argv[i], "--out=", 6) == 0) out = argv[i] + 6;
  }
  const bool full = profile == "full";
  const double min_time = full ? 0.2 : 0.02;
  const std::vector<std::size_t> sizes =
      full ? std::vector<std::size_t>{8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20, 16 << 20,
                                      64 << 20, 256 << 20}
           : std::vector<std::size_t>{8, 1 << 20, 64 << 20};
  const std::string tail = "/mpi/ranks:" + std::to_string(n);
  std::vector<Result> results;
  results.push_back(measure("barrier" + tail, [] { MPI_Barrier(MPI_COMM_WORLD); }, min_time, 0));
  for (std::size_t bytes : sizes) {
    const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
    std::vector<float> data(count, static_cast<float>(rank + 1));
    results.push_back(measure("all_reduce" + tail + "/bytes:" + std::to_string(bytes), [&] {
      MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    }, min_time, static_cast<double>(count * sizeof(float))));
  }
  if (rank == 0) {
    FILE* f = out.empty() ? stdout : std::fopen(out.c_str(), "w");
    if (!f) {
      std::perror(out.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    write_json(f, results, n, profile.c_str());
    if (f != stdout) std::fclose(f);
  }
  MPI_Finalize();
  return 0;
}
