// Runs all_reduce, barrier and collect_results on a large simulated world (default 1024 ranks)
// with small rank stacks, and prints the wall time and the peak memory of the process.
//   usage: scale [ranks] [stack KiB] [concurrent|deterministic]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim.hpp"

namespace {
double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}
}  // namespace

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 1024;
  const std::size_t stack_kib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 128;
  dist::sim::Cluster cluster{.nodes = 1, .ranks_per_node = ranks};
  cluster.stack_size = stack_kib * 1024;
  if (argc > 3 && std::string(argv[3]) == "deterministic")
    cluster.schedule = dist::sim::Schedule::deterministic;
  const auto start = std::chrono::steady_clock::now();
  const auto ok = dist::sim::run(cluster, [] {
    const int r = dist::get_rank();
    std::vector<std::int64_t> v{r, 1};
    dist::all_reduce(v);
    dist::barrier();
    std::vector<int> part{r, r + 1};
    const auto all = dist::collect_results(part, 2L * dist::get_world_size());
    const auto n = static_cast<std::int64_t>(dist::get_world_size());
    bool good = v[0] == n * (n - 1) / 2 && v[1] == n;
    if (r == 0) good = good && all && all->size() == static_cast<std::size_t>(2 * n) && (*all)[1] == 1;
    return good;
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (bool b : ok)
    if (!b) {
      std::printf("scale: wrong result\n");
      return 1;
    }
  std::printf("scale: %d ranks (stack %zu KiB): all_reduce + barrier + collect_results in %.3f s, "
              "peak RSS %.1f MiB\n",
              ranks, stack_kib, seconds, peak_rss_mib());
  return 0;
}
