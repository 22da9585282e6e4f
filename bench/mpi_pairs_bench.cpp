// dist's mpi backend against the MPI calls it wraps, alternated in one run: each round times a
// batch of raw MPI (MPI_Allreduce with MPI_SUM, MPI_Barrier), of MPI's non-blocking form polled
// with MPI_Test (what dist calls), and of the same operation through dist (dist::all_reduce,
// dist::barrier on Backend::mpi); the medians of the rounds' ratios are dist's cost over each.
// Also the call layer's cost: the backend's call through the layer against the same call under it.
// Run: mpirun -n N -x MASTER_ADDR=127.0.0.1 dist_mpi_pairs [--rounds=R] [--out=F.json]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/layer_sides.hpp"
#include "bench/mpi_timing.hpp"
#include "bench/timing.hpp"
#include "dist/dist.hpp"
#include "dist/real/init.hpp"

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
  using dist::bench::mpi_slowest_rank_seconds;
  for (const auto& op : ops) mpi_slowest_rank_seconds(op, 1);
  const int reps =
      dist::bench::batch_size([&](int r) { return mpi_slowest_rank_seconds(ops[0], r); }, 5e-3);
  std::vector<std::vector<double>> times(ops.size());
  std::vector<double> ratios, ratios_blocking;
  for (int i = 0; i < rounds; ++i) {
    for (std::size_t k = 0; k < ops.size(); ++k)
      times[k].push_back(mpi_slowest_rank_seconds(ops[k], reps) / reps);
    ratios.push_back(times[2].back() / times[1].back());
    ratios_blocking.push_back(times[2].back() / times[0].back());
  }
  return {std::move(name), bytes,          median(times[0]), median(times[1]), median(times[2]),
          median(ratios),  median(ratios_blocking), rounds};
}

// Two ops alternated call by call, each call timed alone (a, b, b, a, a, b, ...; every other round
// b first, after an untimed call that absorbs the ranks' arrival), as the gloo pairs do
// (bench/harness.cpp): per round, each op's time summed on each rank, the slowest rank's.
struct Pair {
  std::string name;  // "all_reduce/mpi_layer_vs_none/ranks:2/bytes:8"
  double bytes = 0;
  double a = 0, b = 0;                // median seconds per call
  double ratio = 0, ratio_total = 0;  // median of the rounds' a / b; a's sum over b's
  int rounds = 0;
};

Pair paired(std::string name, double bytes, const std::function<void()>& a,
            const std::function<void()>& b, int rounds) {
  using dist::bench::mpi_slowest_rank_seconds;
  mpi_slowest_rank_seconds(a, 1);
  mpi_slowest_rank_seconds(b, 1);
  const int reps =
      dist::bench::batch_size([&](int r) { return mpi_slowest_rank_seconds(a, r); }, 5e-3);
  std::vector<double> ta, tb, ratios;
  double sum_a = 0, sum_b = 0;
  for (int i = 0; i < rounds; ++i) {
    const bool b_first = i % 2 == 1;
    double spent[2] = {0, 0}, worst[2] = {0, 0};
    MPI_Barrier(MPI_COMM_WORLD);
    (b_first ? b : a)();
    double t0 = MPI_Wtime();
    for (int k = 0; k < 2 * reps; ++k) {
      const bool is_a = ((k % 2 == 0) == (k % 4 < 2)) != b_first;
      (is_a ? a : b)();
      const double t1 = MPI_Wtime();
      spent[is_a ? 0 : 1] += t1 - t0;
      t0 = t1;
    }
    MPI_Allreduce(spent, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    ta.push_back(worst[0] / reps);
    tb.push_back(worst[1] / reps);
    ratios.push_back(worst[0] / std::max(worst[1], 1e-12));
    sum_a += worst[0];
    sum_b += worst[1];
  }
  return {std::move(name), bytes,          median(ta),
          median(tb),      median(ratios), sum_a / std::max(sum_b, 1e-12),
          rounds};
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

void print(const Pair& p) {
  std::printf("%-42s %8.2f us   against %8.2f us   ratio %.3f (of sums %.3f, %d rounds)\n",
              p.name.c_str(), p.a * 1e6, p.b * 1e6, p.ratio, p.ratio_total, p.rounds);
}

// Google Benchmark's JSON shape (bench/report.py reads it). A triple is named "<op>/mpi_vs_
// nonblocking/ranks:N[/bytes:B]": dist's time, the non-blocking and blocking times, the ratios.
// A pair keeps its name: the layer's time, the time without it (base_us), the ratios.
void write_json(FILE* f, const std::vector<Triple>& all, const std::vector<Pair>& pairs, int n) {
  std::fprintf(f, "{\n  \"context\": {\"executable\": \"dist_mpi_pairs\", \"mpi_ranks\": %d},\n"
                  "  \"benchmarks\": [\n", n);
  const char* sep = "";
  for (const Triple& t : all) {
    const auto slash = t.name.find('/');
    const std::string name = t.name.substr(0, slash) + "/mpi_vs_nonblocking/ranks:" + std::to_string(n) +
                             (slash == std::string::npos ? "" : t.name.substr(slash));
    std::fprintf(
        f,
        "%s    {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
        "\"iterations\": %d, \"real_time\": %.6f, \"cpu_time\": %.6f, \"time_unit\": \"us\", "
        "\"ranks\": %d, \"bytes\": %.0f, \"base_us\": %.6f, \"blocking_us\": %.6f, "
        "\"ratio\": %.6f, \"ratio_blocking\": %.6f, \"pairs\": %d}",
        sep, name.c_str(), name.c_str(), t.rounds, t.ours * 1e6, t.ours * 1e6, n, t.bytes,
        t.nonblocking * 1e6, t.blocking * 1e6, t.ratio, t.ratio_blocking, t.rounds);
    sep = ",\n";
  }
  for (const Pair& p : pairs) {
    std::fprintf(
        f,
        "%s    {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
        "\"iterations\": %d, \"real_time\": %.6f, \"cpu_time\": %.6f, \"time_unit\": \"us\", "
        "\"ranks\": %d, \"bytes\": %.0f, \"base_us\": %.6f, \"ratio\": %.6f, "
        "\"ratio_total\": %.6f, \"pairs\": %d}",
        sep, p.name.c_str(), p.name.c_str(), p.rounds, p.a * 1e6, p.a * 1e6, n, p.bytes, p.b * 1e6,
        p.ratio, p.ratio_total, p.rounds);
    sep = ",\n";
  }
  std::fprintf(f, "\n  ]\n}\n");
}

// The call layer on against off (core/calls): the world backend's all_reduce of 8 B and barrier
// through its layer against the same calls on the mpi backend under it, and the method's control,
// the all_reduce under the layer against itself (must read 1.00). Empty without a layer.
std::vector<Pair> layer_pairs(int n, int rounds) {
  dist::bench::LayerSides sides;
  try {
    sides = dist::bench::layer_sides();
  } catch (const std::exception&) {
    return {};
  }
  static std::vector<float> data(2, 1.0F);
  const dist::detail::BufferRef buf{data.data(), data.size(), dist::DType::float32,
                                    dist::Device::cpu()};
  const std::string ranks = "/ranks:" + std::to_string(n);
  return {
      paired(
          "all_reduce/mpi_layer_vs_none" + ranks + "/bytes:8", 8, [&] { sides.on.all_reduce(buf); },
          [&] { sides.off.all_reduce(buf); }, rounds),
      paired(
          "all_reduce/mpi_none_vs_none" + ranks + "/bytes:8", 8, [&] { sides.off.all_reduce(buf); },
          [&] { sides.off.all_reduce(buf); }, rounds),
      paired("barrier/mpi_layer_vs_none" + ranks, 0, sides.on.barrier, sides.off.barrier, rounds)};
}

constexpr int layer_rounds_per_round = 20;

constexpr const char* usage =
    "usage: mpirun -n N [-x MASTER_ADDR=... -x MASTER_PORT=...] dist_mpi_pairs [--rounds=R] "
    "[--out=FILE]\n"
    "  Times MPI's blocking and polled calls against dist's on the mpi backend (barrier, "
    "all_reduce\n"
    "  of 8 B, 1 MiB and 64 MiB), alternated round by round; rank 0 prints the medians and writes\n"
    "  them as JSON to FILE. Run it under mpirun: it reads Open MPI's rank variables.\n";

struct Args {
  int rounds = 7;
  std::string out;
};

// The command line, or nullopt after printing the usage (--help, or an argument it does not know).
std::optional<Args> parse(int argc, char** argv, int& exit_code) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) {
      args.rounds = std::max(1, std::atoi(argv[i] + 9));
    } else if (std::strncmp(argv[i], "--out=", 6) == 0) {
      args.out = argv[i] + 6;
    } else {
      const bool help = std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0;
      if (!help) std::fprintf(stderr, "dist_mpi_pairs: unknown argument '%s'\n", argv[i]);
      std::fputs(usage, help ? stdout : stderr);
      exit_code = help ? 0 : 2;
      return std::nullopt;
    }
  }
  return args;
}

// The measurements of a rank in the mpi world (MPI is initialised).
void measure(const Args& args) {
  const int rounds = args.rounds;
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
  // Short batches: many rounds, as the pair's goal (1.03) asks more of the median than the others.
  const std::vector<Pair> pairs = layer_pairs(n, layer_rounds_per_round * rounds);
  if (rank == 0) {
    for (const Triple& t : all) print(t);
    for (const Pair& p : pairs) print(p);
    if (pairs.empty()) std::printf("no call layer over the mpi backend: no layer_vs_none pair\n");
    if (!args.out.empty()) {
      FILE* f = std::fopen(args.out.c_str(), "w");
      if (!f) {
        std::perror(args.out.c_str());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      write_json(f, all, pairs, n);
      std::fclose(f);
    }
  }
  dist::destroy_dist();
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = 0;
  const auto args = parse(argc, argv, exit_code);
  if (!args) return exit_code;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  try {
    measure(*args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_mpi_pairs: %s\n%s", e.what(), usage);
    MPI_Abort(MPI_COMM_WORLD, 1);  // the other ranks may be inside a call: end them all
  }
  MPI_Finalize();
  return 0;
}
