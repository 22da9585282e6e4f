// The least-squares fit of the network model's terms (Nelder-Mead in log space).
#include "tools/calibrate/fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "dist/errors.hpp"
#include "dist/sim/predict.hpp"

namespace dist::calibrate {

namespace {
// The logarithms of the fitted terms: latency (us), bandwidth (GB/s), call overhead (us),
// reduction rate (GB/s), cache size (bytes), memory rate (GB/s), then the size factors' at
// factor_bytes. The node's copy rate, the cores and the hand-over are measured, kept as given.
constexpr std::array<double, 6> factor_bytes = {1 << 10,   8 << 10, 64 << 10,
                                                512 << 10, 4 << 20, 32 << 20};
constexpr int base_terms = 6;
constexpr int terms = base_terms + static_cast<int>(factor_bytes.size());
using Vec = std::array<double, terms>;

// A term from its logarithm, kept within e^-30..e^30: noisy points (a loaded machine) can send a
// term the data does not pin down toward 0 or infinity, and the profile must stay a valid one.
double term(double log_value) { return std::exp(std::clamp(log_value, -30.0, 30.0)); }

dist::sim::Network with(dist::sim::Network net, const Vec& x) {
  net.intra.latency_us = term(x[0]);
  net.intra.bandwidth_gbps = term(x[1]);
  net.call_overhead_us = term(x[2]);
  net.reduce_gbps = term(x[3]);
  net.cache_bytes = term(x[4]);
  net.memory_gbps = term(x[5]);
  net.intra_factors.clear();
  for (std::size_t i = 0; i < factor_bytes.size(); ++i)
    net.intra_factors.push_back({factor_bytes[i], term(x[base_terms + i])});
  return net;
}

// Nelder-Mead from `x` with steps `step`: the simplex's best vertex after `iterations`.
Vec nelder_mead(const std::function<double(const Vec&)>& f, Vec x, double step, int iterations) {
  constexpr int n = terms;
  std::array<Vec, n + 1> v;
  std::array<double, n + 1> fv;
  for (int i = 0; i <= n; ++i) {
    v[i] = x;
    if (i > 0) v[i][i - 1] += step;
    fv[i] = f(v[i]);
  }
  const auto along = [](const Vec& from, const Vec& to, double t) {
    Vec r;
    for (int k = 0; k < n; ++k) r[k] = from[k] + t * (to[k] - from[k]);
    return r;
  };
  for (int it = 0; it < iterations; ++it) {
    std::array<int, n + 1> order{};
    for (int i = 0; i <= n; ++i) order[static_cast<std::size_t>(i)] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return fv[a] < fv[b]; });
    const int best = order[0], worst = order[n], second = order[n - 1];
    Vec centre{};
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) centre[k] += v[order[i]][k] / n;
    const Vec reflected = along(v[worst], centre, 2.0);
    const double fr = f(reflected);
    if (fr < fv[best]) {
      const Vec expanded = along(v[worst], centre, 3.0);
      const double fe = f(expanded);
      if (fe < fr) v[worst] = expanded, fv[worst] = fe;
      else v[worst] = reflected, fv[worst] = fr;
    } else if (fr < fv[second]) {
      v[worst] = reflected, fv[worst] = fr;
    } else {
      const Vec contracted = along(v[worst], centre, 0.5);
      const double fc = f(contracted);
      if (fc < fv[worst]) {
        v[worst] = contracted, fv[worst] = fc;
      } else {  // shrink toward the best
        for (int i = 0; i <= n; ++i)
          if (i != best) v[i] = along(v[best], v[i], 0.5), fv[i] = f(v[i]);
      }
    }
  }
  return v[static_cast<std::size_t>(std::min_element(fv.begin(), fv.end()) - fv.begin())];
}
}  // namespace

double model_us(const dist::sim::Network& net, const Point& point) {
  dist::sim::Cluster cluster;
  cluster.nodes = 1;
  cluster.ranks_per_node = point.ranks;
  cluster.schedule = dist::sim::Schedule::deterministic;
  cluster.network = net;
  // As measured: a call among back-to-back calls.
  return dist::sim::estimate(cluster, point.kind, static_cast<std::size_t>(point.bytes))
      .back_to_back_us;
}

Fit fit_network(const dist::sim::Network& start, const std::vector<Point>& points) {
  if (points.empty()) throw InvalidArgument("dist_calibrate: no measured points to fit");
  const auto loss = [&](const Vec& x) {
    const auto net = with(start, x);
    double sum = 0;
    for (const Point& p : points) {
      const double e = std::log(model_us(net, p) / p.us);
      sum += e * e;
    }
    return sum;
  };
  // Start from the fastest call (latency and overhead), the fastest rate of any point (bandwidth)
  // and the rate of the largest all_reduce (memory).
  double fastest = points.front().us, peak = 1, largest = 0, large_rate = 1;
  for (const Point& p : points) {
    fastest = std::min(fastest, p.us);
    peak = std::max(peak, p.bytes / p.us / 1e3);
    if (p.kind == "all_reduce" && p.bytes > largest)
      largest = p.bytes, large_rate = p.bytes / p.us / 1e3;
  }
  Vec x{std::log(fastest / 3),
        std::log(peak),
        std::log(fastest / 3),
        std::log(peak),              // reductions as fast as copies
        std::log(16.0 * (1 << 20)),  // a cache of 16 MiB
        std::log(large_rate)};       // past it, the largest all_reduce's rate (factors: 1, log 0)
  for (int round = 0; round < 8; ++round) x = nelder_mead(loss, x, round == 0 ? 1.0 : 0.3, 1500);
  Fit fit;
  fit.network = with(start, x);
  fit.points = static_cast<int>(points.size());
  fit.rms_log_error = std::sqrt(loss(x) / static_cast<double>(points.size()));
  return fit;
}

}  // namespace dist::calibrate
