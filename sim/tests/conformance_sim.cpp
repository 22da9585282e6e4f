// sim's instantiation of the conformance suite (testing/conformance/): worlds of one node through
// dist::sim::run, any-bits inputs and large counts, since sim folds in rank order like reference/.
#include "dist/sim/run.hpp"
#include "testing/conformance/world.hpp"

namespace conformance {

const WorldRunner& world_runner() {
  static const WorldRunner runner = [] {
    WorldRunner w;
    w.name = "sim";
    w.run = [](int n, const std::function<void(int rank)>& fn) {
      dist::sim::Cluster cluster;
      cluster.nodes = 1;
      cluster.ranks_per_node = n;
      dist::sim::run(cluster, [&] { fn(dist::get_rank()); });
    };
    w.world_sizes = {1, 2, 3, 8};
    w.inputs = Inputs::any_bits;
    w.large_count = 100003;
    w.large_chunk = 12501;
    w.large_from_world = 3;
    return w;
  }();
  return runner;
}

}  // namespace conformance
