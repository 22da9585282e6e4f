// What the model's formulas need of a group on a network: its shape, the latency of a step and the
// rates a rank reaches, from the Network's fields (docs/prediction.md).
#pragma once

#include "dist/sim/network.hpp"
#include "model/cost.hpp"

namespace dist::sim::model {

constexpr double bytes_per_us(double gbps) { return gbps * 1e3; }  // 1 GB/s = 1,000 B/µs

struct Terms {
  double p = 1;  // ranks
  double k = 1;  // the most ranks on one node
  int nodes = 1;
  double alpha = 0;      // latency of one step of a ring or chain
  double ring_rate = 0;  // bytes/µs each rank of a ring sends at
  double intra = 0;      // one rank's rate within its node (sharing the node's bus)
  double node_nics = 0;  // the rate of the NICs the group's ranks of one node use together
  // More ranks than cores on a node: a call's overhead, CPU work every rank does at once on
  // entering it, takes ranks / cores times longer (the cores are time-shared), and each
  // latency-bound step also waits `handover` for its receiver to be given a core. The steps'
  // copies and reductions are not slowed: within a step the ranks sharing a core take turns (one
  // waits for its data while the other works), and the senders already share the node's rate.
  double handover = 0;
  double overhead = 0;  // a call's, µs
  double reduce = 0;    // bytes/µs a rank combines (0: free)
  // One step's latency over a link of `latency` µs.
  double step(double latency) const { return latency + handover; }
  double hop() const { return step(alpha); }  // a step of a ring or chain
  // The time to combine `bytes` (0 when reductions are free).
  double combine(double bytes) const { return reduce > 0 ? bytes / reduce : 0; }
};

// `senders`: how many of a node's ranks move data at once in the algorithm (they share node_gbps);
// `step`: the bytes of one of its messages (intra_factors); `both_ways`: each sender also
// receives in the same step (half_duplex halves its rate).
Terms terms(const Network& net, int ranks_per_node, const Placement& at, double size,
            double senders, double step, bool both_ways);

}  // namespace dist::sim::model
