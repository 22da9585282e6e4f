// The terms of a group on a network (terms.hpp).
#include "model/terms.hpp"

#include <algorithm>

namespace dist::sim::model {

Terms terms(const Network& net, int ranks_per_node, const Placement& at, double size,
            double senders, double step, bool both_ways) {
  Terms t;
  t.p = at.ranks;
  t.k = std::max(at.most_per_node, 1);
  t.nodes = at.nodes;
  t.intra = intra_rate(net);
  if (net.node_gbps > 0)
    t.intra = std::min(t.intra, bytes_per_us(net.node_gbps * net.efficiency) / senders);
  // The memory's rate, like the node's copy rate, is the node's: its senders share it (each
  // rank's own where a rank's directions share its rate).
  if (net.memory_gbps > 0 && net.cache_bytes > 0 && size > net.cache_bytes)
    t.intra = std::min(t.intra, bytes_per_us(net.memory_gbps) / (net.half_duplex ? 1 : senders));
  t.intra *= size_factor(net.intra_factors, step);
  if (net.half_duplex && both_ways) t.intra /= 2;
  t.reduce = net.reduce_gbps > 0 ? bytes_per_us(net.reduce_gbps) : 0;
  t.node_nics = nic_rate(net, ranks_per_node, t.k);
  if (at.nodes > 1) {
    t.alpha = net.nic.latency_us;
    t.ring_rate = at.most_per_node > 1 ? std::min(t.intra, t.node_nics) : t.node_nics;
  } else {
    t.alpha = net.intra.latency_us;
    t.ring_rate = t.intra;
  }
  t.overhead = net.call_overhead_us;
  if (net.cores_per_node > 0 && t.k > net.cores_per_node) {
    t.overhead *= t.k / net.cores_per_node;
    t.handover = net.handover_us;
  }
  return t;
}

}  // namespace dist::sim::model
