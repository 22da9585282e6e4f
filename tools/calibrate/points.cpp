// dist_calibrate's measurement records, each point's collective, and their JSON file.
#include "tools/calibrate/points.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>

#include "dist/dist.hpp"
#include "dist/errors.hpp"

namespace dist::calibrate {

Shape shape_of(const std::string& kind, double size, int ranks) {
  const auto p = static_cast<std::size_t>(ranks);
  const auto elements = static_cast<std::size_t>(std::max(1.0, size / sizeof(float)));
  const std::size_t share = std::max<std::size_t>(1, elements / p);  // one rank's chunk
  Shape s;
  if (kind == "all_reduce" || kind == "broadcast") s = {elements, elements, 0};
  else if (kind == "all_gather") s = {share, share * p, 0};
  else if (kind == "reduce_scatter") s = {share * p, share, 0};
  else if (kind == "all_to_all") s = {share * p, share * p, 0};
  else throw InvalidArgument("dist_calibrate: unknown collective '" + kind + "'");
  s.bytes = static_cast<double>(std::max(s.in, s.out) * sizeof(float));
  return s;
}

void call_collective(const std::string& kind, const Shape& s, std::vector<float>& in,
                     std::vector<float>& out) {
  const std::span<float> i(in.data(), s.in), o(out.data(), s.out);
  if (kind == "all_reduce") dist::all_reduce(i);
  else if (kind == "broadcast") dist::broadcast(i, 0);
  else if (kind == "all_gather") dist::all_gather_async(o, i).wait();
  else if (kind == "reduce_scatter") dist::reduce_scatter(o, i);
  else dist::all_to_all(o, i);
}

void write_measurements(const std::string& path, const Measurements& m) {
  nlohmann::json points = nlohmann::json::array();
  for (const Point& p : m.points)
    points.push_back({{"kind", p.kind},
                      {"ranks", p.ranks},
                      {"bytes", p.bytes},
                      {"us", p.us},
                      {"calls", p.calls}});
  const nlohmann::json j = {{"backend", m.backend},         {"cores", m.cores},
                            {"handover_us", m.handover_us}, {"node_copy_gbps", m.node_copy_gbps},
                            {"measured", m.measured},       {"points", points}};
  std::ofstream out(path);
  out << j.dump(1) << "\n";
  if (!out) throw Error(ErrorCode::backend, "dist_calibrate: cannot write '" + path + "'");
}

Measurements read_measurements(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("dist_calibrate: cannot read measurements '" + path + "'");
  try {
    const auto j = nlohmann::json::parse(in);
    Measurements m;
    m.backend = j.at("backend").get<std::string>();
    m.cores = j.at("cores").get<int>();
    m.handover_us = j.value("handover_us", 0.0);  // files written before it was measured lack it
    m.node_copy_gbps = j.value("node_copy_gbps", 0.0);  // the same
    m.measured = j.value("measured", "");
    for (const auto& p : j.at("points"))
      m.points.push_back({p.at("kind").get<std::string>(), p.at("ranks").get<int>(),
                          p.at("bytes").get<double>(), p.at("us").get<double>(),
                          p.value("calls", 0LL)});
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument("dist_calibrate: measurements '" + path + "': " + e.what());
  }
}

bool WithinBand::add(int ranks, double ratio) {
  const bool ok = ratio >= 0.75 && ratio <= 1.33;
  auto at =
      std::find_if(shares.begin(), shares.end(), [&](const Share& s) { return s.ranks == ranks; });
  if (at == shares.end()) at = shares.insert(shares.end(), Share{ranks, 0, 0});
  at->within += ok;
  ++at->points;
  return ok;
}

std::string size_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes == static_cast<long long>(bytes) ? "%.0f %s" : "%.1f %s",
                bytes, units[u]);
  return buf;
}

}  // namespace dist::calibrate
