// The timed collectives of dist_calibrate, run by every process of the launched world.
#include "tools/calibrate/worker.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "bench/timing.hpp"
#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "tools/calibrate/points.hpp"

namespace dist::calibrate {

namespace {

// Microseconds per call: batches of about 2 ms (1, 10, 100, ... calls until one lasts 0.2 ms, then
// scaled), repeated until `min_time_s` is spent and at least 5 batches ran; the fastest batch: on a
// machine shared with other programs a batch the scheduler interrupted (a 4 ms time slice lost) is
// slower by what the network does not cost, and the fastest batch is the least touched.
template <class Op>
Point time_calls(Op op, double min_time_s) {
  const auto slowest = [&](int reps) { return dist::bench::slowest_rank_seconds(op, reps); };
  slowest(1);  // warm-up: connections, first-touch of the buffers
  const int reps = dist::bench::batch_size(slowest, 2e-3, 100000);
  std::vector<double> per_call;
  double spent = 0;
  long long calls = 0;
  while (spent < min_time_s || per_call.size() < 5) {
    const double s = slowest(reps);
    per_call.push_back(s / reps);
    spent += s;
    calls += reps;
  }
  return {"", 0, 0, *std::min_element(per_call.begin(), per_call.end()) * 1e6, calls};
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

}  // namespace

int run_worker(const WorkerArgs& args) {
  const auto backend = args.backend == "mpi" ? dist::Backend::mpi : dist::Backend::gloo;
  dist::InitOptions options;
  options.timeout = std::chrono::milliseconds(static_cast<long long>(args.timeout_s * 1e3));
  dist::init_dist(args.backend == "mpi" ? "mpi" : "pytorch", backend, options);
  const int n = dist::get_world_size(), rank = dist::get_rank();
  Measurements m{
      args.backend, static_cast<int>(std::thread::hardware_concurrency()), utc_now(), {}};
  const double largest = *std::max_element(args.sizes.begin(), args.sizes.end());
  for (const std::string& kind : kinds()) {
    const Shape most = shape_of(kind, largest, n);
    std::vector<float> in(most.in, float(rank + 1)), out(most.out, 0.0f);
    for (const double size : args.sizes) {
      const Shape s = shape_of(kind, size, n);
      Point p = time_calls([&] { call_collective(kind, s, in, out); }, args.min_time_s);
      p.kind = kind;
      p.ranks = n;
      p.bytes = s.bytes;
      m.points.push_back(p);
      if (rank == 0) {
        std::printf("dist_calibrate: %s %s on %d %s ranks: %.1f us (%lld calls)\n", kind.c_str(),
                    size_text(p.bytes).c_str(), n, args.backend.c_str(), p.us, p.calls);
        std::fflush(stdout);
      }
    }
  }
  int status = 0;
  if (rank == 0) {
    try {
      write_measurements(args.result, m);
    } catch (const dist::Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      status = 1;
    }
  }
  dist::destroy_dist();
  return status;
}

}  // namespace dist::calibrate
