// mpi's instantiation of the conformance suite (testing/conformance/): every process of the
// mpirun world (-n 2, -n 3) runs each case as its own rank and checks its own results.
#include <stdexcept>
#include <string>

#include "testing/conformance/world.hpp"

namespace conformance {

const WorldRunner& world_runner() {
  static const int size = dist::get_world_size();  // init_dist ran in main, before any test
  static const WorldRunner runner = [] {
    WorldRunner w;
    w.name = "mpi";
    w.unavailable = [] {
      return dist::is_distributed() ? std::string() : std::string("not in an mpirun world");
    };
    w.run = [](int n, const std::function<void(int rank)>& fn) {
      if (n != dist::get_world_size())
        throw std::logic_error("mpi runs only its mpirun world of " + std::to_string(size) + " ranks");
      fn(dist::get_rank());
    };
    w.min_size = size;
    w.max_size = size;
    w.world_sizes = {size};
    w.large_count = 1000;
    w.large_chunk = 1000;
    return w;
  }();
  return runner;
}

}  // namespace conformance
