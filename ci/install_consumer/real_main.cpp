// Uses the installed dist::real: started by distrun (WORLD_SIZE set) it joins that world with
// init_dist("pytorch", gloo); alone it makes a 1-process world with init_process_group, then
// another through a TCPStore of its own (<dist/store.hpp>), whose calls it checks too.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <dist/dist.hpp>
#include <dist/real/init.hpp>
#include <dist/store.hpp>
#include <memory>
#include <string>
#include <vector>

namespace {

// A 1-process world through a TCPStore, and the store's own calls; false when one is wrong.
bool store_world() {
  auto store = std::make_shared<dist::TCPStore>("127.0.0.1", 0, 1, true, std::chrono::seconds(30));
  dist::init_process_group(dist::Backend::gloo, store, 0, 1, std::chrono::seconds(30));
  std::vector<int> v{7};
  dist::all_reduce(v);
  dist::destroy_dist();
  const bool stored = store->compare_set("k", "", "a") == "a" &&
                      store->compare_set("k", "b", "c") == "a" && store->get_string("k") == "a";
  const auto keys = store->num_keys();
  const bool deleted =
      store->delete_key("k") && !store->check({"k"}) && store->num_keys() == keys - 1;
  if (v == std::vector<int>{7} && stored && deleted) return true;
  std::fprintf(stderr, "install_consumer_real: the TCPStore world or store calls were wrong\n");
  return false;
}

}  // namespace

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
    if (!std::getenv("WORLD_SIZE")) {
      if (!store_world()) return 1;
      std::printf("install_consumer_real: a world through a TCPStore, store calls OK\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "install_consumer_real: %s\n", e.what());
    return 1;
  }
  return 0;
}
