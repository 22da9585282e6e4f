// The preset clusters of <dist/predict.hpp>; docs/prediction.md gives each figure's source.
#include <cstdlib>

#include "dist/errors.hpp"
#include "dist/sim/predict.hpp"

namespace dist::sim {

namespace {
Cluster gpu_cluster(int nodes, Network network) {
  if (nodes < 1)
    throw InvalidArgument("dist::sim::" + network.name + "(nodes): nodes must be >= 1, got " +
                          std::to_string(nodes));
  network.name += "(" + std::to_string(nodes) + ")";
  Cluster c;
  c.nodes = nodes;
  c.ranks_per_node = 8;
  c.schedule = Schedule::deterministic;
  c.network = std::move(network);
  return c;
}

// What the GPU presets share: NCCL's per-hop and per-call latencies (assumed, see the docs) and
// the share of NVLink's line rate its ring reaches (370 of 450 GB/s busbw on 8 H100s).
Network nccl_gpus(std::string name) {
  Network n;
  n.name = std::move(name);
  n.intra.latency_us = 0.6;
  n.nic.latency_us = 3.0;
  n.call_overhead_us = 4.0;
  n.nics_per_node = 8;
  n.efficiency = 370.0 / 450.0;
  n.compute_scale = 1.0;
  return n;
}
}  // namespace

Cluster dgx_h100(int nodes) {
  Network n = nccl_gpus("dgx_h100");
  n.intra.bandwidth_gbps = 450;         // NVLink 4: 18 links x 25 GB/s per direction
  n.nic.bandwidth_gbps = 50;            // ConnectX-7, 400 Gb/s
  n.nvls_gbps = 480.0 / (2.0 * 7 / 8);  // NVLS all_reduce peaks near 480 GB/s busbw on 8 GPUs
  n.source =
      "NVIDIA H100 and DGX H100 datasheets (NVLink 4 at 900 GB/s bidirectional, 8 x 400 Gb/s "
      "ConnectX-7); NCCL's maintainers in nccl-tests issue 212 (ring all_reduce ~370 GB/s busbw, "
      "NVLS ~480 GB/s on 8 H100s)";
  return gpu_cluster(nodes, std::move(n));
}

Cluster a100_hdr(int nodes) {
  Network n = nccl_gpus("a100_hdr");
  n.intra.bandwidth_gbps = 300;  // NVLink 3: 12 links x 25 GB/s per direction
  n.nic.bandwidth_gbps = 25;     // ConnectX-6 HDR InfiniBand, 200 Gb/s
  n.source =
      "NVIDIA A100 and DGX A100 datasheets (NVLink 3 at 600 GB/s bidirectional, 8 x 200 Gb/s "
      "HDR ConnectX-6); ring efficiency taken from the H100 figures";
  return gpu_cluster(nodes, std::move(n));
}

Cluster this_machine(int ranks, const std::string& profile) {
  if (ranks < 1)
    throw InvalidArgument("dist::sim::this_machine: ranks must be >= 1, got " +
                          std::to_string(ranks));
  std::string path = profile;
  if (path.empty()) {
    const char* env = std::getenv("DIST_NETWORK_PROFILE");
    if (!env || !*env)
      throw InvalidArgument(
          "dist::sim::this_machine: no profile given and $DIST_NETWORK_PROFILE is not set; "
          "measure this machine with `dist_calibrate --out profile.json` and pass its path");
    path = env;
  }
  Cluster c;
  c.nodes = 1;
  c.ranks_per_node = ranks;
  c.schedule = Schedule::deterministic;
  c.network = Network::load(path);
  return c;
}

}  // namespace dist::sim
