// The network model's time for one collective: the algorithms NCCL's tuner chooses between, each
// an alpha-beta formula over the group's placement on the nodes (docs/prediction.md).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/calls/call.hpp"
#include "dist/sim/network.hpp"

namespace dist::sim::model {

// Where a group's ranks sit: how many, on how many nodes, and the most on one node.
struct Placement {
  int ranks = 0;
  int nodes = 0;
  int most_per_node = 0;
};
// `ranks` are global ranks, numbered node by node with `ranks_per_node` each.
Placement place(std::span<const int> ranks, int ranks_per_node);

struct Cost {
  double us = 0;
  const char* algorithm = "";
};

// The time of collective `kind` moving `size` bytes as nccl-tests counts them: the buffer of
// all_reduce, broadcast and reduce; the whole output of all_gather(_v) and gather; the whole input
// of reduce_scatter and scatter; each rank's whole buffer of all_to_all. The fastest algorithm
// the network offers wins, as NCCL's tuner picks. Barrier and the group splits cost a
// latency-bound all_reduce.
Cost collective(const Network& net, int ranks_per_node, core::CallKind kind, double size,
                const Placement& where);

// A pipelined chain's parts (broadcast and reduce): each rank's call overhead, one hop's latency
// and the time the whole buffer takes to stream through a link. A single call whose ranks all
// arrive together costs overhead + (ranks - 1) * hop + transfer; the predictor also times each
// rank of a chain on its own (predictor.cpp).
struct ChainParts {
  double overhead = 0, hop = 0, transfer = 0;
};
ChainParts chain_parts(const Network& net, int ranks_per_node, double size, const Placement& where);

// The bandwidth (bytes per microsecond) one rank reaches to another within a node; and the rate
// across nodes of the NICs that `ranks` of a node own together (rail-optimized: each rank owns
// nics_per_node / ranks_per_node of them, and at least one NIC serves them).
double intra_rate(const Network& net);
// Network::intra_factors at a message of `bytes` (1 when there are none).
double size_factor(const std::vector<SizeFactor>& points, double bytes);
double nic_rate(const Network& net, int ranks_per_node, double ranks = 1);

}  // namespace dist::sim::model
