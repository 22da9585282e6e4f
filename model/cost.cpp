// The collective algorithms of the network model: NCCL's, and where Network::algorithms says so
// Open MPI's trees (open_mpi.hpp). docs/prediction.md has the formulas.
#include "model/cost.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "model/open_mpi.hpp"
#include "model/terms.hpp"

namespace dist::sim::model {

namespace {
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
// Whether `kind` runs as one of Open MPI's binomial trees on `net` (open_mpi.hpp).
bool as_open_mpi_tree(const Network& net, core::CallKind kind) {
  return net.algorithms == Network::Algorithms::open_mpi && open_mpi_tree(kind);
}

Terms kind_terms(const Network& net, int ranks_per_node, core::CallKind kind, double size,
                 const Placement& where) {
  using K = core::CallKind;
  const double k = std::max(where.most_per_node, 1);
  // Open MPI's binomial trees: whole buffers, a rank only sending or only receiving in a round,
  // half the ranks sending at once in the first.
  if (as_open_mpi_tree(net, kind))
    return terms(net, ranks_per_node, where, size, std::max(1.0, std::ceil(k / 2)), size, false);
  const bool chain = kind == K::broadcast || kind == K::reduce;
  const bool whole = chain || kind == K::send || kind == K::recv;  // one message of all the bytes
  const bool linear = kind == K::gather || kind == K::scatter;
  // Who sends and receives in one step: every rank of a ring or an exchange, a chain's middle.
  const bool both_ways = chain ? where.ranks > 2 : !whole && !linear;
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
  if (as_open_mpi_tree(net, kind)) return open_mpi_collective(t, kind, size);
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
