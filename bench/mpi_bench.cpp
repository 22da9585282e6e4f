// The OpenMPI baseline: MPI_Allreduce (float sum, in place) and MPI_Barrier at the suite's sizes,
// timed like dist_bench (slowest rank, batches of calls) and written as Google Benchmark JSON.
// Run: mpirun --allow-run-as-root --oversubscribe -n N dist_mpi_bench [--profile=full] [--out=F]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/mpi_timing.hpp"
#include "bench/proc_results.hpp"

namespace {

template <class Op>
dist::bench::ProcResult measure(const std::string& name, Op op, double min_time, double bytes,
                                int n) {
  return dist::bench::measure_batches(
      name, [&](int reps) { return dist::bench::mpi_slowest_rank_seconds(op, reps); }, min_time,
      bytes, dist::bench::all_reduce_factor(n));
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
  std::vector<dist::bench::ProcResult> results;
  results.push_back(measure(
      "barrier" + tail, [] { MPI_Barrier(MPI_COMM_WORLD); }, min_time, 0, n));
  for (std::size_t bytes : sizes) {
    const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
    std::vector<float> data(count, static_cast<float>(rank + 1));
    results.push_back(measure(
        "all_reduce" + tail + "/bytes:" + std::to_string(bytes),
        [&] {
      MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
        },
        min_time, static_cast<double>(count * sizeof(float)), n));
  }
  if (rank == 0) {
    FILE* f = out.empty() ? stdout : std::fopen(out.c_str(), "w");
    if (!f) {
      std::perror(out.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    dist::bench::write_results(f, results, "dist_mpi_bench", n, profile);
    if (f != stdout) std::fclose(f);
  }
  MPI_Finalize();
  return 0;
}
