// A Network's checks and its JSON profile (written by dist_calibrate, read by this_machine).
#include "dist/sim/network.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dist/errors.hpp"

namespace dist::sim {

namespace {
void require(bool ok, const std::string& field, double value, const std::string& rule) {
  if (ok) return;
  std::string shown = std::to_string(value);
  throw InvalidArgument("dist::sim::Network." + field + " = " + shown + ": must be " + rule);
}

void check_link(const Link& link, const std::string& name) {
  require(std::isfinite(link.latency_us) && link.latency_us >= 0, name + ".latency_us",
          link.latency_us, "a finite latency >= 0");
  require(std::isfinite(link.bandwidth_gbps) && link.bandwidth_gbps > 0, name + ".bandwidth_gbps",
          link.bandwidth_gbps, "a finite bandwidth > 0");
}

nlohmann::json to_json(const Link& l) {
  return {{"latency_us", l.latency_us}, {"bandwidth_gbps", l.bandwidth_gbps}};
}
}  // namespace

void check_network(const Network& n) {
  check_link(n.intra, "intra");
  check_link(n.nic, "nic");
  require(n.node_gbps >= 0 && std::isfinite(n.node_gbps), "node_gbps", n.node_gbps,
          ">= 0 (0: no limit)");
  require(n.cores_per_node >= 0, "cores_per_node", n.cores_per_node, ">= 0 (0: a core per rank)");
  require(n.handover_us >= 0 && std::isfinite(n.handover_us), "handover_us", n.handover_us, ">= 0");
  require(n.reduce_gbps >= 0 && std::isfinite(n.reduce_gbps), "reduce_gbps", n.reduce_gbps,
          ">= 0 (0: reductions cost nothing)");
  require(n.cache_bytes >= 0 && std::isfinite(n.cache_bytes), "cache_bytes", n.cache_bytes,
          ">= 0 (0: no cache)");
  require(n.memory_gbps >= 0 && std::isfinite(n.memory_gbps), "memory_gbps", n.memory_gbps,
          ">= 0 (0: no limit)");
  for (std::size_t i = 0; i < n.intra_factors.size(); ++i) {
    const SizeFactor& f = n.intra_factors[i];
    const std::string at = "intra_factors[" + std::to_string(i) + "]";
    require(
        std::isfinite(f.bytes) && f.bytes > 0 && (i == 0 || f.bytes > n.intra_factors[i - 1].bytes),
        at + ".bytes", f.bytes, "finite, > 0 and above the point before");
    require(std::isfinite(f.factor) && f.factor > 0, at + ".factor", f.factor, "finite and > 0");
  }
  require(n.nics_per_node >= 1, "nics_per_node", n.nics_per_node, ">= 1");
  require(n.oversubscription >= 1 && std::isfinite(n.oversubscription), "oversubscription",
          n.oversubscription, ">= 1");
  require(n.efficiency > 0 && n.efficiency <= 1, "efficiency", n.efficiency, "in (0, 1]");
  require(n.nvls_gbps >= 0 && std::isfinite(n.nvls_gbps), "nvls_gbps", n.nvls_gbps,
          ">= 0 (0: none)");
  require(n.call_overhead_us >= 0 && std::isfinite(n.call_overhead_us), "call_overhead_us",
          n.call_overhead_us, ">= 0");
  require(n.compute_scale >= 0 && std::isfinite(n.compute_scale), "compute_scale", n.compute_scale,
          ">= 0");
}

void Network::save(const std::string& path) const {
  nlohmann::json factors = nlohmann::json::array();
  for (const SizeFactor& f : intra_factors)
    factors.push_back({{"bytes", f.bytes}, {"factor", f.factor}});
  const nlohmann::json j = {
      {"name", name},
      {"intra", to_json(intra)},
      {"node_gbps", node_gbps},
      {"cores_per_node", cores_per_node},
      {"handover_us", handover_us},
      {"reduce_gbps", reduce_gbps},
      {"cache_bytes", cache_bytes},
      {"memory_gbps", memory_gbps},
      {"half_duplex", half_duplex},
      {"algorithms", algorithms == Algorithms::open_mpi ? "open_mpi" : "nccl"},
      {"intra_factors", factors},
      {"nics_per_node", nics_per_node},
      {"nic", to_json(nic)},
      {"oversubscription", oversubscription},
      {"efficiency", efficiency},
      {"nvls_gbps", nvls_gbps},
      {"call_overhead_us", call_overhead_us},
      {"compute_scale", compute_scale},
      {"source", source},
  };
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  if (!out)
    throw Error(ErrorCode::backend, "dist::sim::Network::save: cannot write '" + path + "'");
}

Network Network::load(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw InvalidArgument("dist::sim::Network::load: cannot read '" + path +
                          "' (make one with dist_calibrate)");
  Network n;
  std::string field;
  try {
    const auto j = nlohmann::json::parse(in);
    // Every field is optional: a missing one keeps Network's default.
    const auto take = [&](const char* key, auto& into) {
      field = key;
      if (j.contains(key)) j.at(key).get_to(into);
    };
    const auto take_link = [&](const char* key, Link& into) {
      field = key;
      if (!j.contains(key)) return;
      const auto& l = j.at(key);
      field = std::string(key) + ".latency_us";
      if (l.contains("latency_us")) l.at("latency_us").get_to(into.latency_us);
      field = std::string(key) + ".bandwidth_gbps";
      if (l.contains("bandwidth_gbps")) l.at("bandwidth_gbps").get_to(into.bandwidth_gbps);
    };
    take("name", n.name);
    take_link("intra", n.intra);
    take("node_gbps", n.node_gbps);
    take("cores_per_node", n.cores_per_node);
    take("handover_us", n.handover_us);
    take("reduce_gbps", n.reduce_gbps);
    take("cache_bytes", n.cache_bytes);
    take("memory_gbps", n.memory_gbps);
    take("half_duplex", n.half_duplex);
    std::string algorithms = "nccl";
    take("algorithms", algorithms);
    if (algorithms != "nccl" && algorithms != "open_mpi")
      throw InvalidArgument("dist::sim::Network::load: '" + path + "', field 'algorithms': \"" +
                            algorithms + "\" is neither \"nccl\" nor \"open_mpi\"");
    n.algorithms = algorithms == "open_mpi" ? Algorithms::open_mpi : Algorithms::nccl;
    field = "intra_factors";
    if (j.contains("intra_factors"))
      for (const auto& f : j.at("intra_factors")) {
        SizeFactor point;
        field = "intra_factors[" + std::to_string(n.intra_factors.size()) + "]";
        f.at("bytes").get_to(point.bytes);
        f.at("factor").get_to(point.factor);
        n.intra_factors.push_back(point);
      }
    take("nics_per_node", n.nics_per_node);
    take_link("nic", n.nic);
    take("oversubscription", n.oversubscription);
    take("efficiency", n.efficiency);
    take("nvls_gbps", n.nvls_gbps);
    take("call_overhead_us", n.call_overhead_us);
    take("compute_scale", n.compute_scale);
    take("source", n.source);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument("dist::sim::Network::load: '" + path + "'" +
                          (field.empty() ? "" : ", field '" + field + "'") + ": " + e.what());
  }
  try {
    check_network(n);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("dist::sim::Network::load: '" + path + "': " + e.what());
  }
  return n;
}

}  // namespace dist::sim
