// The links that point-to-point transfers of the network model occupy: each rank's port (its
// sends leave one at a time, its receives arrive one at a time) and each node's NICs. A transfer
// starts when it is ready and its links are free, and holds them while its bytes pass, so
// transfers sharing a port or a node's NICs queue behind each other.
#pragma once

#include <vector>

#include "dist/sim/network.hpp"

namespace dist::sim::model {

class Links {
 public:
  Links(const Network& net, int nodes, int ranks_per_node);
  // Reserves the links of `bytes` from global rank src to dst, ready at `ready_us`; returns when
  // the last byte arrives.
  double transfer(int src, int dst, double bytes, double ready_us);

 private:
  // The earliest free of a node's NIC lanes.
  static double& first_free(std::vector<double>& lanes);

  const Network& net_;
  int ranks_per_node_;
  double handover_ = 0;  // more ranks than cores on a node: a transfer waits for its core too
  std::vector<double> send_free_, recv_free_;          // by rank
  std::vector<std::vector<double>> nic_out_, nic_in_;  // by node, by NIC
};

}  // namespace dist::sim::model
