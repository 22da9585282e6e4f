// dist's mpi backend against the MPI calls it wraps, alternated in one run: each round times a
// batch of raw MPI (MPI_Allreduce with MPI_SUM, MPI_Barrier), of MPI's non-blocking form polled
// with MPI_Test (what dist calls), and of the same operation through dist (dist::all_reduce,
// dist::barrier on Backend::mpi); the ratios of the medians are dist's cost over each. Run: mpirun -n N -x MASTER_ADDR=127.0.0.1 dist_mpi_pairs [--rounds=R]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
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

// Median seconds per call of each of `ops` over `rounds` rounds, each round timing a batch
// (~5 ms of the first op) of every op in turn.
std::vector<double> alternated(const std::vector<std::function<void()>>& ops, int rounds) {
  using dist::bench::slowest_rank_seconds;
  for (const auto& op : ops) slowest_rank_seconds(op, 1);
  const int reps = dist::bench::batch_size([&](int r) { return slowest_rank_seconds(ops[0], r); }, 5e-3);
  std::vector<std::vector<double>> times(ops.size());
  for (int i = 0; i < rounds; ++i)
    for (std::size_t k = 0; k < ops.size(); ++k)
      times[k].push_back(slowest_rank_seconds(ops[k], reps) / reps);
  std::vector<double> medians;
  for (auto& t : times) medians.push_back(median(t));
  return medians;
}

// MPI's non-blocking form of an operation, completed by polling MPI_Test as dist does.
template <class Post> void polled(Post&& post) {
  MPI_Request request = MPI_REQUEST_NULL;
  post(&request);
  int done = 0;
  while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
}

void report(int rank, const std::string& name, const std::vector<double>& t) {
  if (rank == 0)
    std::printf("%-28s raw MPI %10.2f us   raw non-blocking %10.2f us   dist mpi %10.2f us   "
                "ratio %.2f (%.2f of non-blocking)\n",
                name.c_str(), t[0] * 1e6, t[1] * 1e6, t[2] * 1e6, t[2] / t[0], t[2] / t[1]);
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
  report(rank, "barrier",
         alternated({[] { MPI_Barrier(MPI_COMM_WORLD); },
                     [] { polled([](MPI_Request* r) { MPI_Ibarrier(MPI_COMM_WORLD, r); }); },
                     [] { dist::barrier(); }},
                    rounds));
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{1} << 20, std::size_t{64} << 20}) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> a(count, 1.0F), b(count, 1.0F), c(count, 1.0F);
    const int n_elems = static_cast<int>(count);
    report(rank, "all_reduce float32 " + std::to_string(bytes) + " B",
           alternated({[&] { MPI_Allreduce(MPI_IN_PLACE, a.data(), n_elems, MPI_FLOAT, MPI_SUM,
                                           MPI_COMM_WORLD); },
                       [&] { polled([&](MPI_Request* r) {
                               MPI_Iallreduce(MPI_IN_PLACE, c.data(), n_elems, MPI_FLOAT, MPI_SUM,
                                              MPI_COMM_WORLD, r);
                             }); },
                       [&] { dist::all_reduce(b, dist::ReduceOp::sum); }},
                      rounds));
  }
  dist::destroy_dist();
  MPI_Finalize();
  return 0;
}
