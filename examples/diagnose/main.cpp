// What a failing job says: runs one classic bug on 3 ranks and prints the error every rank gets.
// On sim (the default) the bug is caught at once; as processes of a real world (--launcher
// pytorch under distrun, or mpi under mpirun) the call layer explains it after the timeout, in
// the same words (README "When a job fails").
//   diagnose --bug op                                  # sim
//   distrun -n 3 -- diagnose --bug op --launcher pytorch --timeout-ms 1000
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dist/dist.hpp>
#include <dist/init.hpp>
#include <dist/sim.hpp>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Floats = std::vector<float>;

// Each bug: call #1 is a good all_reduce on every rank; rank 1 (or 2) then gets call #2 wrong,
// and barriers follow.
const std::map<std::string, std::function<void(int)>>& bugs() {
  static const std::map<std::string, std::function<void(int)>> table{
      {"kind",
       [](int rank) {  // rank 1 broadcasts while the others all_reduce
    Floats v(4, 1.0F);
    if (rank == 1) dist::broadcast(v, 0);
    else dist::all_reduce(v);
       }},
      {"dtype",
       [](int rank) {
    if (rank == 1) {
      std::vector<std::int32_t> v(4, 1);
      dist::all_reduce(v);
    } else {
      Floats v(4, 1.0F);
      dist::all_reduce(v);
    }
       }},
      {"count",
       [](int rank) {
    Floats v(rank == 1 ? 8 : 4, 1.0F);
    dist::all_reduce(v);
       }},
      {"root",
       [](int rank) {
    Floats v(4, 1.0F);
    dist::broadcast(v, rank == 1 ? 1 : 0);
       }},
      {"op",
       [](int rank) {
    Floats v(4, 1.0F);
    dist::all_reduce(v, rank == 1 ? dist::ReduceOp::max : dist::ReduceOp::sum);
       }},
      {"reduce_scatter",
       [](int rank) {  // rank 1 reduce_scatters what the others all_reduce
    Floats out(4, 1.0F), in(12, 1.0F);
    if (rank == 1) dist::reduce_scatter(std::span<float>(out), std::span<float>(in));
    else dist::all_reduce(out);
       }},
      {"group",
       [](int rank) {  // rank 1 all_reduces on a subgroup, the others on the world
    const dist::Group pair = dist::new_group({0, 1});
    Floats v(4, 1.0F);
    if (rank == 1) dist::all_reduce(v, dist::ReduceOp::sum, pair);
    else dist::all_reduce(v);
       }},
      {"skip",
       [](int rank) {  // rank 2 skips the all_reduce and goes on to the barrier
    Floats v(4, 1.0F);
    if (rank != 2) dist::all_reduce(v);
    dist::barrier();
       }},
      {"asleep",
       [](int rank) {  // rank 2 is busy outside dist far past the timeout
    if (rank == 2) std::this_thread::sleep_for(std::chrono::seconds(4));
    Floats v(4, 1.0F);
    dist::all_reduce(v);
       }},
      {"killed",
       [](int rank) {  // rank 2's process dies
    if (rank == 2) ::raise(SIGKILL);
    Floats v(4, 1.0F);
    dist::all_reduce(v);
       }},
      };
  return table;
}

const char* class_name(dist::ErrorCode code) {
  switch (code) {
    case dist::ErrorCode::invalid_argument: return "InvalidArgument";
    case dist::ErrorCode::not_initialized: return "NotInitialized";
    case dist::ErrorCode::desync: return "DesyncError";
    case dist::ErrorCode::deadlock: return "DeadlockError";
    case dist::ErrorCode::timeout: return "TimeoutError";
    case dist::ErrorCode::rank_failure: return "RankFailure";
    case dist::ErrorCode::backend: return "BackendError";
    case dist::ErrorCode::aborted: return "Aborted";
  }
  return "Error";
}

// Runs the bug on this rank; returns what it raised ("DesyncError: ..."), or "" when nothing.
std::string run_bug(const std::string& bug) {
  const int rank = dist::get_rank();
  try {
    Floats warm_up(4, 1.0F);
    dist::all_reduce(warm_up);  // call #1
    bugs().at(bug)(rank);
    // The job goes on: mismatched calls that completed are found by the cross-check, and raised
    // at a later call, within a second.
    for (int step = 0; step < 40; ++step) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      dist::barrier();
    }
  } catch (const dist::Error& e) {
    return std::string(class_name(e.code())) + ": " + e.what();
  }
  return "";
}

void print(const std::string& prefix, const std::string& text) {
  std::istringstream lines(text.empty() ? "no error (the bug went unnoticed)" : text);
  for (std::string line; std::getline(lines, line);)
    std::printf("%s%s\n", prefix.c_str(), line.c_str());
  std::fflush(stdout);
}

struct Args {
  std::string bug, launcher = "sim";
  dist::Backend backend = dist::Backend::gloo;
  int timeout_ms = 1000;
};

Args parse(int argc, char** argv) {
  Args a;
  bool ok = argc % 2 == 1;
  for (int i = 1; ok && i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--bug" && bugs().count(value)) a.bug = value;
    else if (flag == "--launcher") a.launcher = value;
    else if (flag == "--backend")
      a.backend = value == "mpi" ? dist::Backend::mpi : dist::Backend::gloo;
    else if (flag == "--timeout-ms") a.timeout_ms = std::atoi(value.c_str());
    else ok = false;
  }
  if (!ok || a.bug.empty() || a.timeout_ms <= 0) {
    std::string names;
    for (const auto& [name, fn] : bugs()) names += (names.empty() ? "" : "|") + name;
    std::fprintf(stderr,
                 "usage: diagnose --bug %s [--launcher sim|pytorch|mpi] [--backend gloo|mpi] "
                 "[--timeout-ms N]\n",
                 names.c_str());
    std::exit(2);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  if (args.launcher == "sim") {
    // Deterministic: the ranks arrive in the same order every run, so the output is the same.
    const dist::sim::Cluster cluster{
        .nodes = 1, .ranks_per_node = 3, .schedule = dist::sim::Schedule::deterministic};
    const auto errors = dist::sim::run(cluster, [&] { return run_bug(args.bug); });
    for (std::size_t r = 0; r < errors.size(); ++r)
      print("[" + std::to_string(r) + "] ", errors[r]);
    return 0;
  }
  dist::init_dist(args.launcher, args.backend,
                  {.timeout = std::chrono::milliseconds(args.timeout_ms)});
  const std::string error = run_bug(args.bug);
  // distrun prefixes each line with "[rank] " itself; mpirun does not.
  print(args.launcher == "mpi" ? "[" + std::to_string(dist::get_rank()) + "] " : "", error);
  dist::destroy_dist();
  return error.empty() ? 1 : 0;
}
