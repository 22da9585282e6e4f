// The network a simulated cluster predicts with (link dist::sim): a topology of nodes and the
// latency and bandwidth of its links. Given one in Cluster::network, a deterministic run advances
// every rank's clock by the modeled time of each call, so it predicts how long the program would
// take on that network (see <dist/predict.hpp> for the presets and the report).
#pragma once

#include <string>
#include <vector>

#include "dist/export.hpp"

namespace dist::sim {

// One kind of link, per direction.
struct Link {
  double latency_us = 0;      // per message (one hop of an algorithm)
  double bandwidth_gbps = 0;  // line rate in GB/s (10^9 bytes per second)
};

// One point of a size-dependent factor: the factor for messages of `bytes`.
struct SizeFactor {
  double bytes = 0;
  double factor = 1;
};

// The model. Ranks are numbered node by node (Cluster::nodes × ranks_per_node); within a node a
// rank reaches any other over `intra`; across nodes through its node's NICs and a switch fabric.
//
// Collectives take the time of the algorithm NCCL's tuner would choose for their size: the
// fastest of those the model knows (ring and tree for all_reduce and barrier, in-switch
// reduction within a node when `nvls_gbps` is set; ring for all_gather and reduce_scatter; a
// pipelined chain for broadcast and reduce; pairwise exchange for all_to_all, its cross-node
// share through the NICs; a linear fan-in or fan-out for gather and scatter). Sends and receives
// take their link (a rank's own port within a node, one of its node's NICs across nodes), and
// transfers that share a port or NIC queue behind each other. docs/prediction.md gives the
// formulas.
struct DIST_API Network {
  std::string name = "network";  // shown in reports, e.g. "dgx_h100(128)"
  Link intra{1.0, 100.0};        // a rank to another rank of its node
  // The node's total intra-node traffic at once (a memory bus, a CPU's copy bandwidth): the ranks
  // of a node that send at once in an algorithm share it (all of them in a ring or an exchange,
  // all but the last in a chain). 0: no such limit (each rank has its own link, as with NVSwitch).
  double node_gbps = 0;
  // Ranks of one node that run at the same time (a CPU's cores). With more ranks than this on a
  // node, each call's overhead (CPU work all ranks do at once) takes ranks / cores times longer
  // and each latency-bound step also waits handover_us for its receiver to be given a core; the
  // steps' copies and reductions are not slowed (the ranks of a core take turns within a step,
  // and senders share node_gbps however the cores run them). 0: one per rank.
  int cores_per_node = 0;
  // The time a process takes to hand its core to another that waits for it (dist_calibrate
  // measures it: two processes on one core taking turns). Paid per step only where a node has
  // more ranks than cores_per_node.
  double handover_us = 0;
  // A CPU's terms (0: none, as on GPUs, where NCCL's kernels reduce at link speed and buffers
  // live in device memory). reduce_gbps: the rate at which a rank combines the bytes it reduces.
  // cache_bytes and memory_gbps: a call whose size (as estimate() counts it) exceeds cache_bytes
  // moves its bytes within a node at most at memory_gbps, which the node's ranks sending at once
  // share (as node_gbps).
  double reduce_gbps = 0;
  double cache_bytes = 0;
  double memory_gbps = 0;
  // A rank's sends and receives share its rate (a CPU process copies both with its one thread;
  // NVLink and NICs are full duplex): in a step where a rank does both (every rank of a ring or an
  // exchange, the middle ranks of a chain) each moves at half the rate the terms above give. With
  // it, memory_gbps is each rank's own instead of shared. dist_calibrate sets it.
  bool half_duplex = false;
  // Whose collective algorithms are timed, as SMPI's collective selectors model each MPI library's:
  // NCCL's (above; the presets), or those of Open MPI's non-blocking collectives as dist's mpi
  // backend calls them, which differ in kind for all_reduce, reduce and reduce_scatter: a binomial
  // tree of whole buffers up to rank 0 (each round's receivers combining), then all_reduce's
  // binomial broadcast back down, reduce_scatter's scatter of the shares (all_gather and
  // all_to_all, each rank to every other, move a ring's and an exchange's bytes; broadcast keeps
  // the chain). dist_calibrate sets it from the backend it measured.
  enum class Algorithms { nccl, open_mpi };
  Algorithms algorithms = Algorithms::nccl;
  // Size-dependent bandwidth within a node, as SMPI's bw-factor (dist_calibrate fits it): a step
  // of an algorithm that moves a message of b bytes (a ring's chunk, size / ranks; a chain's whole
  // buffer; an exchange's share per peer) reaches the rate the terms above give times the factor
  // at b, interpolated linearly in log(bytes) between the points (sorted by bytes) and held past
  // either end. It stands for what the terms do not model: a transport's protocol switches and
  // the caches a message of that size fits in. Empty: 1 at every size.
  std::vector<SizeFactor> intra_factors;
  int nics_per_node = 1;
  Link nic{5.0, 25.0};  // one NIC; its latency includes the switch
  // The fabric's oversubscription: bandwidth across nodes is the NICs' divided by this (>= 1).
  double oversubscription = 1.0;
  // The share of a link's line rate that bulk transfers reach (protocol and kernel overheads).
  double efficiency = 1.0;
  // In-switch reduction within a node (NVLink SHARP, NCCL's NVLS): each rank sends its data to
  // the switch once and receives the result once, at this rate. 0: none.
  double nvls_gbps = 0;
  double call_overhead_us = 0;  // per collective call (launch and synchronization)
  // A rank's CPU time between calls counts as compute time multiplied by this (0: calls only;
  // dist::sim::advance adds explicit compute time whatever it is).
  double compute_scale = 1.0;
  std::string source;  // where the figures come from

  // Reads a profile written by save() (JSON), e.g. by dist_calibrate; InvalidArgument naming the
  // file and the field when it is missing, malformed or out of range.
  static Network load(const std::string& path);
  // Writes it as JSON; dist::Error when the file cannot be written.
  void save(const std::string& path) const;
};

// InvalidArgument naming the field when a parameter is out of range (a bandwidth <= 0, a
// negative latency, oversubscription < 1, efficiency outside (0, 1], ...).
DIST_API void check_network(const Network& network);

}  // namespace dist::sim
