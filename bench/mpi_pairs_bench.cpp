// dist's mpi backend against the MPI calls it wraps, paired in one run: each round times a batch
// of raw MPI (MPI_Allreduce with MPI_SUM, MPI_Barrier) and then a batch of the same operation
// through dist (dist::all_reduce, dist::barrier on Backend::mpi), and the ratio of their median
// times is dist's cost. Run: mpirun -n N -x MASTER_ADDR=127.0.0.1 dist_mpi_pairs [--rounds=R]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/batch_size.hpp"
#include "bench/mpi_timing.hpp"
#include "dist/dist.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds per call of raw and of ours over `rounds` alternated batches of ~5 ms each.
template <class Raw, class Ours>
std::pair<double, double> pair_times(Raw&& raw, Ours&& ours, int rounds) {
  using dist::bench::slowest_rank_seconds;
  slowest_rank_seconds(raw, 1);
  slowest_rank_seconds(ours, 1);
  const int reps = dist::bench::batch_size([&](int r) { return slowest_rank_seconds(raw, r); }, 5e-3);
  std::vector<double> raw_t, ours_t;
  for (int i = 0; i < rounds; ++i) {
    raw_t.push_back(slowest_rank_seconds(raw, reps) / reps);
    ours_t.push_back(slowest_rank_seconds(ours, reps) / reps);
  }
  return {median(raw_t), median(ours_t)};
}

void report(int rank, const std::string& name, std::pair<double, double> t) {
  if (rank == 0)
    std::printf("%-28s raw MPI %10.2f us   dist mpi %10.2f us   ratio %.2f\n", name.c_str(),
                t.first * 1e6, t.second * 1e6, t.second / t.first);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rounds = 7;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) rounds = std::max(1, std::atoi(argv[i] + 9));
  dist::init_dist("mpi", dist::Backend::mpi);
  const int rank = dist::get_rank();
  const int n = dist::get_world_size();
  if (rank == 0) std::printf("dist_mpi_pairs: %d ranks, median of %d alternated rounds\n", n, rounds);
  report(rank, "barrier", pair_times([] { MPI_Barrier(MPI_COMM_WORLD); }, [] { dist::barrier(); }, rounds));
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{1} << 20, std::size_t{64} << 20}) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> a(count, 1.0F), b(count, 1.0F);
    report(rank, "all_reduce float32 " + std::to_string(bytes) + " B",
           pair_times([&] { MPI_Allreduce(MPI_IN_PLACE, a.data(), static_cast<int>(count), MPI_FLOAT,
                                          MPI_SUM, MPI_COMM_WORLD); },
                      [&] { dist::all_reduce(b, dist::ReduceOp::sum); }, rounds));
  }
  dist::destroy_dist();
  MPI_Finalize();
  return 0;
}
