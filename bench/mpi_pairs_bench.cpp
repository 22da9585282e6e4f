// dist's mpi backend against the MPI calls it wraps, alternated in one run: each round times a
// batch of raw MPI (MPI_Allreduce with MPI_SUM, MPI_Barrier), of MPI's non-blocking form polled
// with MPI_Test (what dist calls), and of the same operation through dist (dist::all_reduce,
// dist::barrier on Backend::mpi); the medians of the rounds' ratios are dist's cost over each.
// Run: mpirun -n N -x MASTER_ADDR=127.0.0.1 dist_mpi_pairs [--rounds=R] [--out=F.json]
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
#include "dist/init.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One operation measured three ways: raw blocking MPI, MPI's non-blocking form, and dist.
struct Triple {
  std::string name;    // "barrier", "all_reduce/bytes:8" (the JSON name's parts)
  double bytes = 0;
  double blocking = 0, nonblocking = 0, ours = 0;  // median seconds per call
  double ratio = 0, ratio_blocking = 0;            // medians of the rounds' ratios (ours / base)
  int rounds = 0;
};

// Each of `rounds` rounds times a batch (~5 ms of the first op) of every op in turn, so all three
// meet the machine's slow and fast moments alike.
Triple alternated(std::string name, double bytes, const std::vector<std::function<void()>>& ops,
                  int rounds) {
  using dist::bench::slowest_rank_seconds;
  for (const auto& op : ops) slowest_rank_seconds(op, 1);
  const int reps = dist::bench::batch_size([&](int r) { return slowest_rank_seconds(ops[0], r); }, 5e-3);
  std::vector<std::vector<double>> times(ops.size());
  std::vector<double> ratios, ratios_blocking;
  for (int i = 0; i < rounds; ++i) {
    for (std::size_t k = 0; k < ops.size(); ++k)
      times[k].push_back(slowest_rank_seconds(ops[k], reps) / reps);
    ratios.push_back(times[2].back() / times[1].back());
    ratios_blocking.push_back(times[2].back() / times[0].back());
  }
  return {std::move(name), bytes,          median(times[0]), median(times[1]), median(times[2]),
          median(ratios),  median(ratios_blocking), rounds};
}

// MPI's non-blocking form of an operation, completed by polling MPI_Test as dist does.
template <class Post> void polled(Post&& post) {
  MPI_Request request = MPI_REQUEST_NULL;
  post(&request);
  int done = 0;
  while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
}

void print(const Triple& t) {
  std::printf("%-22s raw MPI %10.2f us   raw non-blocking %10.2f us   dist mpi %10.2f us   "
              "ratio %.2f (%.2f of non-blocking)\n",
              t.name.c_str(), t.blocking * 1e6, t.nonblocking * 1e6, t.ours * 1e6, t.ratio_blocking,
              t.ratio);
}

// Google Benchmark's JSON shape, one entry per operation named "<op>/mpi_vs_nonblocking/ranks:N
// [/bytes:B]" (bench/report.py reads it): dist's time, the non-blocking and blocking times, the
// ratios.
void write_json(FILE* f, const std::vector<Triple>& all, int n) {
  std::fprintf(f, "{\n  \"context\": {\"executable\": \"dist_mpi_pairs\", \"mpi_ranks\": %d},\n"
                  "  \"benchmarks\": [\n", n);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Triple& t = all[i];
    const auto slash = t.name.find('/');
    const std::string name = t.name.substr(0, slash) + "/mpi_vs_nonblocking/ranks:" + std::to_string(n) +
                             (slash == std::string::npos ? "" : t.name.substr(slash));
    std::fprintf(f,
                 "    {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                 "\"iterations\": %d, \"real_time\": %.6f, \"cpu_time\": %.6f, \"time_unit\": \"us\", "
                 "\"ranks\": %d, \"bytes\": %.0f, \"base_us\": %.6f, \"blocking_us\": %.6f, "
                 "\"ratio\": %.6f, \"ratio_blocking\": %.6f, \"pairs\": %d}%s\n",
                 name.c_str(), name.c_str(), t.rounds, t.ours * 1e6, t.ours * 1e6, n, t.bytes,
                 t.nonblocking * 1e6, t.blocking * 1e6, t.ratio, t.ratio_blocking, t.rounds,
                 i + 1 < all.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rounds = 7;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) rounds = std::max(1, std::atoi(argv[i] + 9));
    if (std::strncmp(argv[i], "--out=", 6) == 0) out = argv[i] + 6;
  }
  dist::init_dist("mpi", dist::Backend::mpi);
  const int rank = dist::get_rank();
  const int n = dist::get_world_size();
  if (rank == 0) std::printf("dist_mpi_pairs: %d ranks, median of %d alternated rounds\n", n, rounds);
  std::vector<Triple> all;
  all.push_back(alternated("barrier", 0,
                           {[] { MPI_Barrier(MPI_COMM_WORLD); },
                            [] { polled([](MPI_Request* r) { MPI_Ibarrier(MPI_COMM_WORLD, r); }); },
                            [] { dist::barrier(); }},
                           rounds));
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{1} << 20, std::size_t{64} << 20}) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> a(count, 1.0F), b(count, 1.0F), c(count, 1.0F);
    const int n_elems = static_cast<int>(count);
    all.push_back(alternated(
        "all_reduce/bytes:" + std::to_string(bytes), static_cast<double>(bytes),
        {[&] { MPI_Allreduce(MPI_IN_PLACE, a.data(), n_elems, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); },
         [&] {
           polled([&](MPI_Request* r) {
             MPI_Iallreduce(MPI_IN_PLACE, c.data(), n_elems, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r);
           });
         },
         [&] { dist::all_reduce(b, dist::ReduceOp::sum); }},
        rounds));
  }
  if (rank == 0) {
    for (const Triple& t : all) print(t);
    if (!out.empty()) {
      FILE* f = std::fopen(out.c_str(), "w");
      if (!f) {
        std::perror(out.c_str());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      write_json(f, all, n);
      std::fclose(f);
    }
  }
  dist::destroy_dist();
  MPI_Finalize();
  return 0;
}
