// Point-to-point transfers of the network model over ranks' ports and nodes' NICs.
#include "model/links.hpp"

#include <algorithm>

#include "model/cost.hpp"

namespace dist::sim::model {

Links::Links(const Network& net, int nodes, int ranks_per_node)
    : net_(net),
      ranks_per_node_(ranks_per_node),
      send_free_(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(ranks_per_node), 0.0),
      recv_free_(send_free_.size(), 0.0) {
  if (nodes > 1) {
    nic_out_.assign(static_cast<std::size_t>(nodes),
                    std::vector<double>(static_cast<std::size_t>(net.nics_per_node), 0.0));
    nic_in_ = nic_out_;
  }
  if (net.cores_per_node > 0 && ranks_per_node > net.cores_per_node) handover_ = net.handover_us;
}

double& Links::first_free(std::vector<double>& lanes) {
  return *std::min_element(lanes.begin(), lanes.end());
}

double Links::transfer(int src, int dst, double bytes, double ready_us) {
  double& out = send_free_[static_cast<std::size_t>(src)];
  double& in = recv_free_[static_cast<std::size_t>(dst)];
  const int src_node = src / ranks_per_node_, dst_node = dst / ranks_per_node_;
  if (src_node == dst_node) {
    const double start = std::max({ready_us, out, in});
    const double busy = bytes / intra_rate(net_);
    out = in = start + busy;
    return start + net_.intra.latency_us + handover_ + busy;
  }
  double& lane_out = first_free(nic_out_[static_cast<std::size_t>(src_node)]);
  double& lane_in = first_free(nic_in_[static_cast<std::size_t>(dst_node)]);
  // One NIC each side; the rank's own share of its node's NICs when that is more than one.
  const double start = std::max({ready_us, out, in, lane_out, lane_in});
  const double busy = bytes / nic_rate(net_, ranks_per_node_);
  out = in = lane_out = lane_in = start + busy;
  return start + net_.nic.latency_us + handover_ + busy;
}

}  // namespace dist::sim::model
