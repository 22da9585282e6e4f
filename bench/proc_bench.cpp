// dist_proc_bench: dist's process backends as their users run them, one process per rank (gloo
// under distrun, mpi under mpirun): barrier, all_reduce of float32 at the suite's sizes and
// all_gather_object of 10,000 records, the workloads of torch_bench.py, timed the same way
// (slowest rank, batches of calls) and written by rank 0 as Google Benchmark JSON. Then the
// overlap of an async call with the caller's work (DDP's bucketed gradients): a 64 MiB
// all_reduce_async, 50 ms of computation, then its wait, against the longer of the two alone.
//   distrun -n N -- dist_proc_bench --launcher=pytorch --backend=gloo [--profile=full] [--out=F]
//   mpirun -n N -x MASTER_ADDR=127.0.0.1 dist_proc_bench --launcher=mpi --backend=mpi ...
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "bench/proc_results.hpp"
#include "dist/dist.hpp"
#include "dist/real/init.hpp"

namespace {

using dist::bench::ProcResult;

// A record of the helpers' benchmark, as torch_bench.py makes them: (id, score, file name).
struct Record {
  std::int64_t id = 0;
  double score = 0;
  std::string name;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, score, name);
  }
};

struct Args {
  std::string launcher = "pytorch", backend = "gloo", profile = "smoke", out;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = arg.substr(arg.find('=') + 1);
    if (arg.starts_with("--launcher=")) a.launcher = value;
    else if (arg.starts_with("--backend=")) a.backend = value;
    else if (arg.starts_with("--profile=")) a.profile = value;
    else if (arg.starts_with("--out=")) a.out = value;
    else {
      std::fprintf(stderr, "dist_proc_bench: unknown argument %s\n", argv[i]);
      std::exit(2);
    }
  }
  return a;
}

template <class Op>
ProcResult measure(const std::string& name, Op op, double min_time, double bytes = 0,
                   double factor = 1) {
  return dist::bench::measure_batches(
      name, [&](int reps) { return dist::bench::slowest_rank_seconds(op, reps); }, min_time, bytes,
      factor);
}

// About `ms` of one core's arithmetic (calibrated once per process), kept from being optimised out.
volatile double compute_sink = 0;

void compute(double ms) {
  static double per_ms = 0;
  const auto spin = [](long long steps) {
    double x = 1.0;
    for (long long i = 0; i < steps; ++i) x = x * 1.0000001 + 1e-9;
    compute_sink = x;
  };
  if (per_ms == 0) {
    const auto start = std::chrono::steady_clock::now();
    spin(50'000'000);
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    per_ms = 50'000'000 / took.count();
  }
  spin(static_cast<long long>(per_ms * ms));
}

// "overlap/<tag>/ranks:n/" + compute, all_reduce (64 MiB, async then waited), both (the
// all_reduce issued, the computation, then the wait) and alone: the longer of the first two, the
// figure `both` is compared with (at most 1.2 of it on 2 processes: issue 40).
void add_overlap(std::vector<ProcResult>& results, const std::string& tail, double min_time) {
  const int rank = dist::get_rank();
  std::vector<float> data((std::size_t{64} << 20) / sizeof(float), float(rank + 1));
  const std::string at = "overlap" + tail + "/";
  const auto work = measure(
      at + "compute", [] { compute(50); }, min_time);
  const auto reduce = measure(
      at + "all_reduce", [&] { dist::all_reduce_async(std::span<float>(data)).wait(); }, min_time);
  const auto both = measure(
      at + "both",
      [&] {
    auto pending = dist::all_reduce_async(std::span<float>(data));
    compute(50);
    pending.wait();
      },
      min_time);
  ProcResult alone = work.seconds_per_call > reduce.seconds_per_call ? work : reduce;
  alone.name = at + "alone";
  results.insert(results.end(), {work, reduce, both, alone});
}

std::vector<ProcResult> run_suite(const std::string& tag, bool full) {
  const int n = dist::get_world_size(), rank = dist::get_rank();
  const double min_time = full ? 0.2 : 0.05;
  const std::string tail = "/" + tag + "/ranks:" + std::to_string(n);
  std::vector<ProcResult> results;
  results.push_back(measure(
      "barrier" + tail, [] { dist::barrier(); }, min_time));
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{1} << 20, std::size_t{64} << 20}) {
    std::vector<float> data(std::max<std::size_t>(1, bytes / sizeof(float)), float(rank + 1));
    results.push_back(measure(
        "all_reduce" + tail + "/bytes:" + std::to_string(bytes), [&] { dist::all_reduce(data); },
        min_time, double(data.size() * sizeof(float)), dist::bench::all_reduce_factor(n)));
  }
  std::vector<Record> records;
  for (int i = 0; i < 10000; ++i)
    records.push_back({rank * 10000 + i, i * 0.5, "img_" + std::to_string(i % 1000)});
  results.push_back(measure(
      "all_gather_object" + tail + "/records:10000",
      [&] { (void)dist::all_gather_object(records); }, min_time));
  add_overlap(results, tail, min_time);
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  const auto backend = a.backend == "mpi" ? dist::Backend::mpi : dist::Backend::gloo;
  dist::init_dist(a.launcher, backend);
  const auto results = run_suite(a.backend + "_procs", a.profile == "full");
  int status = 0;
  if (dist::get_rank() == 0) {
    std::FILE* f = a.out.empty() ? stdout : std::fopen(a.out.c_str(), "w");
    if (!f) {
      std::perror(a.out.c_str());
      status = 1;
    } else {
      dist::bench::write_results(f, results, "dist_proc_bench", dist::get_world_size(), a.profile);
      if (f != stdout) std::fclose(f);
    }
  }
  dist::destroy_dist();
  return status;
}
