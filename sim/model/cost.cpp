// The collective algorithms of the network model (docs/prediction.md has the formulas).
#include "sim/model/cost.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace dist::sim::model {

namespace {
constexpr double bytes_per_us(double gbps) { return gbps * 1e3; }  // 1 GB/s = 1,000 B/µs

// What the formulas need of a group on a network.
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
// `step`: the bytes of one of its messages (intra_factors).
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

Cost all_reduce(const Network& net, const Terms& t, double size) {
  Cost best{t.overhead + 2 * (t.p - 1) * t.hop() + 2 * (t.p - 1) / t.p * size / t.ring_rate +
                t.combine((t.p - 1) / t.p * size),
            "ring"};
  if (t.nodes > 1) {  // a chain inside each node, a binary tree across the nodes; up then down
    const double depth = std::ceil(std::log2(t.nodes)) * t.step(net.nic.latency_us) +
                         (t.k - 1) * t.step(net.intra.latency_us);
    const Cost tree{t.overhead + 2 * depth + 2 * size / t.ring_rate + t.combine(size), "tree"};
    if (tree.us < best.us) best = tree;
  }
  if (t.nodes == 1 && net.nvls_gbps > 0) {  // to the switch and back, reduced in the switch
    const Cost nvls{
        t.overhead + 2 * t.step(net.intra.latency_us) + size / bytes_per_us(net.nvls_gbps), "nvls"};
    if (nvls.us < best.us) best = nvls;
  }
  return best;
}

// Pairwise exchange: each rank sends 1/p of its buffer to every other; the cross-node share of a
// node's ranks goes through the node's NICs together.
Cost all_to_all(const Terms& t, double size) {
  const double within = (t.k - 1) / t.p * size / t.intra;
  const double across = t.k * (t.p - t.k) / t.p * size / t.node_nics;
  return {t.overhead + (t.p - 1) * t.hop() + std::max(within, across), "pairwise"};
}

// Gather and scatter: the root exchanges a 1/p share with each rank at once, over its own port
// within the node and its NIC share across.
Cost linear(const Network& net, const Terms& t, int ranks_per_node, double size) {
  const double within = (t.k - 1) / t.p * size / t.intra;
  const double across = (t.p - t.k) / t.p * size / nic_rate(net, ranks_per_node);
  return {t.overhead + t.hop() + std::max(within, across), "linear"};
}
}  // namespace

double size_factor(const std::vector<SizeFactor>& points, double bytes) {
  if (points.empty()) return 1;
  if (bytes <= points.front().bytes) return points.front().factor;
  if (bytes >= points.back().bytes) return points.back().factor;
  const auto above = std::upper_bound(points.begin(), points.end(), bytes,
                                      [](double b, const SizeFactor& p) { return b < p.bytes; });
  const SizeFactor& lo = *(above - 1);
  const SizeFactor& hi = *above;
  const double t = std::log(bytes / lo.bytes) / std::log(hi.bytes / lo.bytes);
  return lo.factor + t * (hi.factor - lo.factor);
}

Placement place(std::span<const int> ranks, int ranks_per_node) {
  Placement at;
  at.ranks = static_cast<int>(ranks.size());
  std::unordered_map<int, int> per_node;
  int last_node = -1, run = 0;
  for (const int r : ranks) {
    const int node = r / ranks_per_node;
    if (node == last_node) {  // consecutive ranks mostly share a node: skip the map's lookup
      ++run;
      continue;
    }
    if (last_node >= 0) per_node[last_node] += run;
    last_node = node;
    run = 1;
  }
  if (last_node >= 0) per_node[last_node] += run;
  at.nodes = static_cast<int>(per_node.size());
  for (const auto& [node, n] : per_node) at.most_per_node = std::max(at.most_per_node, n);
  return at;
}

double intra_rate(const Network& net) {
  return bytes_per_us(net.intra.bandwidth_gbps * net.efficiency);
}

double nic_rate(const Network& net, int ranks_per_node, double ranks) {
  const double share = std::clamp(net.nics_per_node * ranks / ranks_per_node, 1.0,
                                  static_cast<double>(net.nics_per_node));
  return bytes_per_us(net.nic.bandwidth_gbps * net.efficiency) * share / net.oversubscription;
}

namespace {
// A chain's last rank only receives: one sender fewer than the node's ranks (the root alone on two
// ranks); every rank of a ring or an exchange sends at once.
Terms kind_terms(const Network& net, int ranks_per_node, core::CallKind kind, double size,
                 const Placement& where) {
  using K = core::CallKind;
  const bool chain = kind == K::broadcast || kind == K::reduce;
  const bool whole = chain || kind == K::send || kind == K::recv;  // one message of all the bytes
  const bool linear = kind == K::gather || kind == K::scatter;
  // Who sends and receives in one step: every rank of a ring or an exchange, a chain's middle.
  const bool both_ways = chain ? where.ranks > 2 : !whole && !linear;
  const double k = std::max(where.most_per_node, 1);
  return terms(net, ranks_per_node, where, size, chain ? std::max(1.0, k - 1) : k,
               whole ? size : size / where.ranks, both_ways);
}

// A chain's parts from its terms (broadcast's and reduce's are the same).
ChainParts chain_of(const Terms& t, double size) {
  return {t.overhead, t.hop(), size / t.ring_rate};
}
}  // namespace

ChainParts chain_parts(const Network& net, int ranks_per_node, double size,
                       const Placement& where) {
  return chain_of(kind_terms(net, ranks_per_node, core::CallKind::broadcast, size, where), size);
}

Cost collective(const Network& net, int ranks_per_node, core::CallKind kind, double size,
                const Placement& where) {
  using K = core::CallKind;
  if (where.ranks <= 1) return {0, "local"};
  const Terms t = kind_terms(net, ranks_per_node, kind, size, where);
  Cost c;
  switch (kind) {
    case K::all_reduce: c = all_reduce(net, t, size); break;
    case K::barrier:
    case K::split:
    case K::split_groups: c = all_reduce(net, t, 0); break;
    case K::all_gather:
    case K::all_gather_v:
    case K::reduce_scatter: {
      const double combined = kind == K::reduce_scatter ? t.combine((t.p - 1) / t.p * size) : 0;
      c = {t.overhead + (t.p - 1) * t.hop() + (t.p - 1) / t.p * size / t.ring_rate + combined,
           "ring"};
      break;
    }
    case K::broadcast:
    case K::reduce: {
      const double combined = kind == K::reduce ? t.combine(size) : 0;
      const ChainParts chain = chain_of(t, size);
      c = {chain.overhead + (t.p - 1) * chain.hop + chain.transfer + combined, "chain"};
      break;
    }
    case K::all_to_all:
    case K::all_to_all_v: c = all_to_all(t, size); break;
    case K::gather:
    case K::scatter: c = linear(net, t, ranks_per_node, size); break;
    case K::send:
    case K::recv: {
      const bool same_node = where.nodes == 1;
      c = {same_node ? t.step(net.intra.latency_us) + size / t.intra
                     : t.step(net.nic.latency_us) + size / nic_rate(net, ranks_per_node),
           "direct"};
      break;
    }
  }
  return c;
}

}  // namespace dist::sim::model
