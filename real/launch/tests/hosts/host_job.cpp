// One rank of the multi-host tests: init_dist on gloo (--launcher pytorch or slurm) or on mpi
// (--launcher mpi, which also picks the mpi backend), then
// --calls all_reduces of rank + 1, each checked against the world's sum, --interval-ms apart.
// It prints "ready", then "ok ..." or "error at <ms>: <code>: <what>", the time destroy_dist
// took and "exit at <ms>" (wall-clock milliseconds, so a test times each side against the fault
// it injected). Exit status: 0, 3 after a dist::Error, 2 on a usage error.
// `host_job --stranger HOST:PORT` is instead a stranger to a job without a secret: it connects to
// the job's store and tries to write the cross-check's verdict, printing what the store said.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "dist/store.hpp"

namespace {

using Clock = std::chrono::steady_clock;

long long wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Args {
  std::string stranger;  // HOST:PORT
  std::string launcher = "pytorch";
  int calls = 10;
  int interval_ms = 0;
  int timeout_ms = 10000;
  int groups = 0;           // groups of every rank made with a timeout of their own
  int late_destroy_ms = 0;  // ranks off rank 0's host wait this long before destroy_dist
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--launcher") a.launcher = value;
    else if (flag == "--stranger") a.stranger = value;
    else if (flag == "--calls") a.calls = std::atoi(value.c_str());
    else if (flag == "--interval-ms") a.interval_ms = std::atoi(value.c_str());
    else if (flag == "--timeout-ms") a.timeout_ms = std::atoi(value.c_str());
    else if (flag == "--groups") a.groups = std::atoi(value.c_str());
    else if (flag == "--late-destroy-ms") a.late_destroy_ms = std::atoi(value.c_str());
    else throw std::invalid_argument("unknown option " + flag);
  }
  return a;
}

// The job; throws what dist throws.
void run(const Args& a) {
  dist::init_dist(a.launcher, a.launcher == "mpi" ? dist::Backend::mpi : dist::Backend::gloo,
                  {.timeout = std::chrono::milliseconds(a.timeout_ms)});
  const int rank = dist::get_rank(), size = dist::get_world_size();
  std::printf("ready: rank %d of %d, local %d of %d, pid %d\n", rank, size, dist::get_local_rank(),
              dist::get_local_size(), static_cast<int>(::getpid()));
  std::fflush(stdout);
  long long expected = 0;
  for (int r = 0; r < size; ++r) expected += r + 1;
  std::vector<int> everyone(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) everyone[static_cast<std::size_t>(r)] = r;
  std::vector<dist::Group> groups;  // each connects anew: its own connections and store keys
  for (int g = 0; g < a.groups; ++g)
    groups.push_back(
        dist::new_group(everyone, {.timeout = std::chrono::milliseconds(a.timeout_ms)}));
  for (int call = 1; call <= a.calls; ++call) {
    std::vector<long long> v{rank + 1};
    dist::all_reduce(
        v, dist::ReduceOp::sum,
        groups.empty() ? dist::Group{} : groups[static_cast<std::size_t>(call) % groups.size()]);
    if (v[0] != expected)
      throw std::runtime_error("call " + std::to_string(call) + ": sum " + std::to_string(v[0]) +
                               ", expected " + std::to_string(expected));
    std::this_thread::sleep_for(std::chrono::milliseconds(a.interval_ms));
  }
  std::printf("ok: %d calls, sum %lld\n", a.calls, expected);
}

int stranger(const std::string& where) {
  const auto colon = where.rfind(':');
  dist::TCPStore store(where.substr(0, colon), std::stoi(where.substr(colon + 1)));
  store.set("stranger/was-here", std::string("yes"));  // any client may write elsewhere
  for (const char* key : {"calls/desync", "calls/status/0"}) {
    try {
      store.set(key, std::string("a stranger's words"));
      std::printf("stranger: wrote %s\n", key);
    } catch (const dist::Error& e) {
      std::printf("stranger: refused %s: %s\n", key, e.what());
    }
  }
  return 0;
}

void destroy(const Args& a, bool off_rank_0s_host) {
  if (off_rank_0s_host) std::this_thread::sleep_for(std::chrono::milliseconds(a.late_destroy_ms));
  const auto start = Clock::now();
  dist::destroy_dist();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  std::printf("destroy_dist: %lld ms\n", static_cast<long long>(ms.count()));
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "host_job: %s\n", e.what());
    return 2;
  }
  if (!args.stranger.empty()) return stranger(args.stranger);
  int status = 0;
  bool off_rank_0s_host = false;
  try {
    run(args);
    off_rank_0s_host = dist::get_rank() >= dist::get_local_size();
  } catch (const dist::Error& e) {
    std::printf("error at %lld: %s: %s\n", wall_ms(),
                std::string(dist::to_string(e.code())).c_str(), e.what());
    status = 3;
  } catch (const std::exception& e) {
    std::printf("error at %lld: not a dist::Error: %s\n", wall_ms(), e.what());
    status = 4;
  }
  std::fflush(stdout);
  try {
    destroy(args, off_rank_0s_host);
  } catch (const std::exception& e) {
    std::printf("destroy_dist raised: %s\n", e.what());
  }
  std::printf("exit at %lld\n", wall_ms());
  std::fflush(stdout);
  return status;
}
