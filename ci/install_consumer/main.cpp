// Uses the installed dist package: a 2-rank all_reduce on the simulated cluster, checked.
#include <cstdio>
#include <dist/dist.hpp>
#include <dist/sim/run.hpp>
#include <vector>

int main() {
  const auto sums = dist::sim::run(dist::sim::Cluster{.nodes = 1, .ranks_per_node = 2}, [] {
    std::vector<int> v{dist::get_rank() + 1, 10};
    dist::all_reduce(v, "sum");
    return v;
  });
  for (const auto& v : sums) {
    if (v != std::vector<int>{3, 20}) {
      std::fprintf(stderr, "install_consumer: wrong all_reduce result\n");
      return 1;
    }
  }
  std::printf("install_consumer: 2-rank all_reduce OK\n");
  return 0;
}
