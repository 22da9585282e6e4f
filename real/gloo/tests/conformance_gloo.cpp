// gloo's instantiation of the conformance suite (testing/conformance/): ranks as threads of this
// process (run_thread_world), exact-sum inputs, and messages of several megabytes.
#include <chrono>

#include "real/testing.hpp"
#include "testing/conformance/world.hpp"

namespace conformance {

const WorldRunner& world_runner() {
  static const WorldRunner runner = [] {
    WorldRunner w;
    w.name = "gloo";
    w.run = [](int n, const std::function<void(int rank)>& fn) {
      dist::real::run_thread_world_or_throw(dist::Backend::gloo, n, std::chrono::seconds(60), fn);
    };
    w.world_sizes = {2, 3, 4};
    w.large_count = 1000;
    w.large_chunk = 1000;
    w.huge_count = 3'000'001;  // gloo splits it into many segments
    return w;
  }();
  return runner;
}

}  // namespace conformance
