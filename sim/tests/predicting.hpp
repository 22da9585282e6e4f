// What the network model's tests share: a network of round figures and a predicting cluster on it.
#pragma once

#include <utility>

#include "dist/sim/predict.hpp"

namespace predict_test {

// Round figures: 1 GB/s is 1,000 bytes per microsecond.
inline dist::sim::Network simple_network() {
  dist::sim::Network n;
  n.name = "simple";
  n.intra = {1.0, 1.0};
  n.nic = {10.0, 0.5};
  n.nics_per_node = 1;
  n.call_overhead_us = 0;
  n.compute_scale = 0;  // only the calls and advance() count
  return n;
}

inline dist::sim::Cluster predicting(int nodes, int ranks_per_node,
                                     dist::sim::Network net = simple_network()) {
  dist::sim::Cluster c;
  c.nodes = nodes;
  c.ranks_per_node = ranks_per_node;
  c.schedule = dist::sim::Schedule::deterministic;
  c.network = std::move(net);
  return c;
}

}  // namespace predict_test
