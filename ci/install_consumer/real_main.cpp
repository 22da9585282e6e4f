// Uses the installed dist::real: started by distrun (WORLD_SIZE set) it joins that world with
// init_dist("pytorch", gloo); alone it makes a 1-process world with init_process_group. Checked.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <dist/dist.hpp>
#include <dist/init.hpp>

int main() {
  try {
    if (std::getenv("WORLD_SIZE")) {
      dist::init_dist("pytorch", dist::Backend::gloo, {.timeout = std::chrono::seconds(30)});
    } else {
      const std::string path = "/tmp/dist_install_consumer_" + std::to_string(::getpid());
      dist::init_process_group(dist::Backend::gloo, "file://" + path, 0, 1, std::chrono::seconds(30));
    }
    const int n = dist::get_world_size(), rank = dist::get_rank();
    std::vector<int> v{rank + 1, 10};
    dist::all_reduce(v, "sum");
    if (dist::get_backend() != dist::Backend::gloo || v != std::vector<int>{n * (n + 1) / 2, 10 * n}) {
      std::fprintf(stderr, "install_consumer_real: wrong result on rank %d of %d\n", rank, n);
      return 1;
    }
    std::printf("install_consumer_real: rank %d of %d, gloo all_reduce OK\n", rank, n);
    dist::destroy_dist();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "install_consumer_real: %s\n", e.what());
    return 1;
  }
  return 0;
}
