// dist_calibrate: measures this machine's real backend (gloo processes under distrun, mpi under
// mpirun) on the five collectives from 8 B to 64 MiB, fits the network model's terms (latency,
// bandwidth, per-call overhead and the CPU terms: reductions, cache, memory, the node's copy rate)
// to the smallest world's points and writes the JSON profile that
// dist::sim::this_machine(ranks, profile) loads.
//   dist_calibrate [--backend gloo|mpi] [--ranks 2,4] [--quick] [--out this_machine.json]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "dist/errors.hpp"
#include "dist/real/init.hpp"
#include "tools/calibrate/copy_rate.hpp"
#include "tools/calibrate/fit.hpp"
#include "tools/calibrate/handover.hpp"
#include "tools/calibrate/launch.hpp"
#include "tools/calibrate/points.hpp"
#include "tools/calibrate/worker.hpp"

namespace {

namespace cal = dist::calibrate;
namespace fs = std::filesystem;

constexpr const char* usage_text =
    "usage: dist_calibrate [--backend gloo|mpi] [--ranks N[,N...]] [--quick] [--out FILE]\n"
    "                      [--measurements FILE] [--from FILE] [--min-time S] [--limit-s S]\n"
    "                      [--port P] [--distrun PATH] [--mpirun PATH]\n"
    "  --backend         the backend measured (default mpi when dist has it and mpirun is found,\n"
    "                    else gloo); gloo runs under distrun, mpi under mpirun\n"
    "  --ranks           world sizes measured (default 2); the model is fitted to the smallest\n"
    "  --quick           3 sizes (8 B, 64 KiB, 1 MiB) and short timing, for tests\n"
    "  --out             the profile written (default this_machine.json)\n"
    "  --measurements    also write the measured points (JSON) here\n"
    "  --from            fit the points of an earlier --measurements file instead of measuring\n"
    "  --min-time        seconds timed per point (default 0.1; --quick 0.01)\n"
    "  --limit-s         deadline of each world's measurement in seconds (default 1200)\n"
    "  --port            the rendezvous port (default 29700; one more per world size)\n";

struct Args {
  std::string backend, out = "this_machine.json", measurements, from, distrun, mpirun;
  std::vector<int> ranks{2};
  bool quick = false, worker = false;
  double min_time_s = -1, limit_s = 1200;
  int port = 29700;
  cal::WorkerArgs work;
};

[[noreturn]] void bad(const std::string& what) {
  std::fprintf(stderr, "dist_calibrate: %s\n%s", what.c_str(), usage_text);
  std::exit(2);
}

std::string shown(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double number(const std::string& flag, const std::string& text, double low, double high) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= low && v <= high))
    bad(flag + " takes a number in [" + shown(low) + ", " + shown(high) + "], got '" + text + "'");
  return v;
}

std::vector<double> list(const std::string& flag, const std::string& text, double low,
                         double high) {
  std::vector<double> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(number(flag, text.substr(at, comma - at), low, high));
    at = comma + 1;
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) bad(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage_text, stdout);
      std::exit(0);
    } else if (arg == "--backend") {
      a.backend = value();
      if (a.backend != "gloo" && a.backend != "mpi")
        bad("--backend takes gloo or mpi, got '" + a.backend + "'");
    } else if (arg == "--ranks") {
      a.ranks.clear();
      for (const double r : list(arg, value(), 2, 256))
        if (r != static_cast<int>(r)) bad("--ranks takes whole numbers >= 2");
        else a.ranks.push_back(static_cast<int>(r));
    } else if (arg == "--quick") a.quick = true;
    else if (arg == "--out") a.out = value();
    else if (arg == "--measurements") a.measurements = value();
    else if (arg == "--from") a.from = value();
    else if (arg == "--min-time") a.min_time_s = number(arg, value(), 0, 60);
    else if (arg == "--limit-s") a.limit_s = number(arg, value(), 1, 86400);
    else if (arg == "--port") a.port = static_cast<int>(number(arg, value(), 1024, 65000));
    else if (arg == "--distrun") a.distrun = value();
    else if (arg == "--mpirun") a.mpirun = value();
    // The measuring processes' own arguments, given by the launch below.
    else if (arg == "--worker") a.worker = true;
    else if (arg == "--sizes") a.work.sizes = list(arg, value(), 1, 1e12);
    else if (arg == "--timeout-s") a.work.timeout_s = number(arg, value(), 1, 86400);
    else if (arg == "--result") a.work.result = value();
    else bad("unknown argument '" + arg + "'");
  }
  if (a.backend.empty()) a.backend = dist::is_mpi_available() ? "mpi" : "gloo";
  if (a.backend == "mpi" && !dist::is_mpi_available())
    bad("--backend mpi: this dist was built without MPI (use --backend gloo)");
  if (a.min_time_s < 0) a.min_time_s = a.quick ? 0.01 : 0.1;
  std::sort(a.ranks.begin(), a.ranks.end());
  a.ranks.erase(std::unique(a.ranks.begin(), a.ranks.end()), a.ranks.end());
  return a;
}

std::vector<double> sizes(bool quick) {
  if (quick) return {8, 64 << 10, 1 << 20};
  std::vector<double> s;
  for (double b = 8; b <= (32 << 20); b *= 4) s.push_back(b);  // 8 B, 32 B, ..., 32 MiB
  s.push_back(64 << 20);
  return s;
}

std::string joined(const std::vector<double>& v) {
  std::string s;
  for (const double x : v) s += (s.empty() ? "" : ",") + std::to_string(static_cast<long long>(x));
  return s;
}

// The launcher command that starts `ranks` measuring processes of this executable.
std::vector<std::string> launch_command(const Args& a, int ranks, int port,
                                        const std::string& result) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  std::vector<std::string> cmd;
  if (a.backend == "gloo") {
    // Installed beside distrun; in the build tree, build/tools/calibrate beside build/real/launch.
    const std::string distrun =
        cal::find_program("distrun", a.distrun,
                          {(self.parent_path() / "distrun").string(),
                           (self.parent_path() / "../../real/launch/distrun").string()});
    if (distrun.empty())
      bad("distrun not found (beside dist_calibrate or on $PATH); give --distrun");
    cmd = {distrun, "-n", std::to_string(ranks), "--master-port", std::to_string(port), "--"};
  } else {
    const std::string mpirun = cal::find_program("mpirun", a.mpirun, {});
    if (mpirun.empty()) bad("mpirun not found on $PATH; give --mpirun or use --backend gloo");
    cmd = {mpirun,
           "--allow-run-as-root",
           "--oversubscribe",
           "-n",
           std::to_string(ranks),
           "-x",
           "MASTER_ADDR=127.0.0.1",
           "-x",
           "MASTER_PORT=" + std::to_string(port)};
  }
  const double timeout = std::min(120.0, a.limit_s);
  for (const std::string& s :
       {self.string(), std::string("--worker"), std::string("--backend"), a.backend,
        std::string("--sizes"), joined(sizes(a.quick)), std::string("--min-time"),
        std::to_string(a.min_time_s), std::string("--timeout-s"), std::to_string(timeout),
        std::string("--result"), result})
    cmd.push_back(s);
  return cmd;
}

// The cost of handing a core from one process to another (Network::handover_us).
double handover(const Args& a) {
  std::printf("dist_calibrate: measuring a hand-over between two processes on one core\n");
  std::fflush(stdout);
  return cal::measure_handover_us(std::min(60.0, a.limit_s));
}

// The node's copy rate, a thread per core (Network::node_gbps).
double node_copies(int cores) {
  std::printf("dist_calibrate: measuring the node's copy rate (%d threads copying at once)\n",
              cores);
  std::fflush(stdout);
  return cal::measure_node_copy_gbps(std::max(cores, 1));
}

cal::Measurements measure(const Args& a) {
  cal::Measurements all;
  int port = a.port;
  for (const int ranks : a.ranks) {
    const fs::path result =
        fs::temp_directory_path() /
        ("dist_calibrate." + std::to_string(getpid()) + "." + std::to_string(ranks) + ".json");
    std::printf("dist_calibrate: measuring %s on %d processes (deadline %.0f s)\n",
                a.backend.c_str(), ranks, a.limit_s);
    std::fflush(stdout);
    const int status = cal::run_with_deadline(launch_command(a, ranks, port++, result), a.limit_s);
    if (status != 0)
      throw dist::Error(dist::ErrorCode::backend,
                        "dist_calibrate: the " + std::to_string(ranks) + "-rank " + a.backend +
                            " measurement failed (exit status " + std::to_string(status) +
                            "; its output is above)");
    cal::Measurements m = cal::read_measurements(result);
    fs::remove(result);
    if (all.points.empty()) all = m;
    else all.points.insert(all.points.end(), m.points.begin(), m.points.end());
  }
  all.handover_us = handover(a);
  all.node_copy_gbps = node_copies(all.cores);
  return all;
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "this machine";
}

// Each point against the fitted model, and the share within 0.75-1.33 per world size.
void summary(const cal::Measurements& m, const cal::Fit& fit, int fitted_ranks) {
  std::printf("\n%-15s %6s %10s %12s %12s %7s\n", "collective", "ranks", "size", "measured us",
              "model us", "ratio");
  cal::WithinBand within;
  for (const cal::Point& p : m.points) {
    const double model = cal::model_us(fit.network, p), ratio = model / p.us;
    std::printf("%-15s %6d %10s %12.1f %12.1f %7.2f\n", p.kind.c_str(), p.ranks,
                cal::size_text(p.bytes).c_str(), p.us, model, ratio);
    within.add(p.ranks, ratio);
  }
  const auto& n = fit.network;
  std::printf(
      "\nfitted on the %d-rank points (%d, rms log error %.3f): intra latency %.2f us, "
      "intra bandwidth %.3f GB/s, call overhead %.2f us, reductions %.3f GB/s, cache %.1f MiB, "
      "memory %.3f GB/s, node copies %.3f GB/s (measured), cores per node %d (measured hand-over "
      "%.2f us); "
      "bandwidth factors by message",
      fitted_ranks, fit.points, fit.rms_log_error, n.intra.latency_us, n.intra.bandwidth_gbps,
      n.call_overhead_us, n.reduce_gbps, n.cache_bytes / (1 << 20), n.memory_gbps, n.node_gbps,
      n.cores_per_node, n.handover_us);
  for (const auto& f : n.intra_factors)
    std::printf("%s %s %.2f", &f == &n.intra_factors.front() ? "" : ",",
                cal::size_text(f.bytes).c_str(), f.factor);
  std::printf("\n");
  for (const auto& w : within.shares)
    std::printf("model/measured within 0.75-1.33 at %d ranks: %d of %d points\n", w.ranks, w.within,
                w.points);
}

int calibrate(const Args& a) {
  cal::Measurements m = a.from.empty() ? measure(a) : cal::read_measurements(a.from);
  if (m.handover_us <= 0) m.handover_us = handover(a);  // a file from before it was measured
  if (m.node_copy_gbps <= 0) m.node_copy_gbps = node_copies(m.cores);
  if (!a.measurements.empty()) cal::write_measurements(a.measurements, m);
  int fitted_ranks = 0;
  for (const cal::Point& p : m.points)
    fitted_ranks = fitted_ranks ? std::min(fitted_ranks, p.ranks) : p.ranks;
  std::vector<cal::Point> fitted;
  std::copy_if(m.points.begin(), m.points.end(), std::back_inserter(fitted),
               [&](const cal::Point& p) { return p.ranks == fitted_ranks; });
  dist::sim::Network start;
  start.name = "this_machine";
  start.cores_per_node = m.cores;  // physical: ranks beyond the cores share them
  start.handover_us = m.handover_us;
  start.efficiency = 1.0;          // one node: the fitted bandwidth is already the effective rate
  start.half_duplex = true;        // a process copies what it sends and receives on one thread
  start.node_gbps = m.node_copy_gbps;  // measured: two ranks' points cannot place it
  // Open MPI's binomial trees where its algorithm differs from NCCL's (dist's mpi backend).
  if (m.backend == "mpi") start.algorithms = dist::sim::Network::Algorithms::open_mpi;
  const cal::Fit fit = cal::fit_network(start, fitted);
  dist::sim::Network net = fit.network;
  double smallest = fitted.front().bytes, largest = smallest;
  for (const auto& p : fitted)
    smallest = std::min(smallest, p.bytes), largest = std::max(largest, p.bytes);
  net.source = "dist_calibrate: " + m.backend + " processes on " + host_name() + " (" +
               std::to_string(m.cores) + " cores), measured " + m.measured + "; fitted to " +
               std::to_string(fit.points) + " points at " + std::to_string(fitted_ranks) +
               " ranks (all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, " +
               cal::size_text(smallest) + " to " + cal::size_text(largest) + ")";
  net.save(a.out);
  summary(m, fit, fitted_ranks);
  std::printf("dist_calibrate: wrote %s (load it with dist::sim::this_machine(ranks, \"%s\"))\n",
              a.out.c_str(), a.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    if (a.worker) {
      cal::WorkerArgs w = a.work;
      w.backend = a.backend;
      w.min_time_s = a.min_time_s;
      if (w.sizes.empty() || w.result.empty()) bad("--worker needs --sizes and --result");
      return cal::run_worker(w);
    }
    return calibrate(a);
  } catch (const std::exception& e) {  // dist::Error, or the file system's
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
