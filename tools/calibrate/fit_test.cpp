// The fit against a known answer: points made by the model itself from a network with every
// fitted term set (size factors among them) must be fitted back to within a few percent.
#include "tools/calibrate/fit.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "dist/errors.hpp"

namespace {

namespace cal = dist::calibrate;

dist::sim::Network truth() {
  dist::sim::Network n;
  n.intra = {0.4, 5.0};
  n.call_overhead_us = 0.7;
  n.reduce_gbps = 2.5;
  n.cache_bytes = 12.0 * (1 << 20);
  n.memory_gbps = 1.2;
  n.node_gbps = 6.0;
  n.cores_per_node = 2;
  n.half_duplex = true;
  n.intra_factors = {{1 << 10, 0.6},   {8 << 10, 0.8}, {64 << 10, 1.4},
                     {512 << 10, 1.2}, {4 << 20, 0.9}, {32 << 20, 1.0}};
  return n;
}

// With NCCL's algorithms and with Open MPI's (as dist_calibrate fits an mpi backend's points).
TEST(CalibrateFit, RecoversTheTimesOfAKnownNetwork) {
  using Algorithms = dist::sim::Network::Algorithms;
  for (const Algorithms algorithms : {Algorithms::nccl, Algorithms::open_mpi}) {
    dist::sim::Network known = truth();
    known.algorithms = algorithms;
    std::vector<cal::Point> points;
    for (const auto& kind : cal::kinds())
      for (double bytes = 8; bytes <= 64.0 * (1 << 20); bytes *= 4) {
        cal::Point p{kind, 2, bytes, 0, 1};
        p.us = cal::model_us(known, p);
        points.push_back(p);
      }
    dist::sim::Network start;
    start.cores_per_node = 2;  // kept, not fitted
    start.half_duplex = true;
    start.algorithms = algorithms;
    start.node_gbps = known.node_gbps;  // measured, not fitted
    const cal::Fit fit = cal::fit_network(start, points);
    const bool nccl = algorithms == Algorithms::nccl;
    EXPECT_EQ(fit.points, static_cast<int>(points.size())) << nccl;
    EXPECT_EQ(fit.network.cores_per_node, 2);
    EXPECT_EQ(fit.network.algorithms, algorithms);
    ASSERT_EQ(fit.network.intra_factors.size(), known.intra_factors.size());
    EXPECT_LT(fit.rms_log_error, 0.05) << nccl;
    for (const cal::Point& p : points)
      EXPECT_NEAR(cal::model_us(fit.network, p) / p.us, 1.0, 0.15)
          << p.kind << " of " << p.bytes << " bytes, nccl " << nccl;
  }
}

// Points measured on a loaded machine (a CI run of bench_calibrate_gloo: 2 gloo processes beside
// other tests), where a small call took longer than a large one: the fit once drove the cache size
// to infinity there, and the profile it wrote was refused.
TEST(CalibrateFit, PointsFromALoadedMachineStillGiveAValidNetwork) {
  const std::vector<std::array<double, 3>> measured = {{54.9, 1251.3, 560.1},
                                                       {1376.5, 3023.2, 388.5},
                                                       {67.2, 160.0, 993.3},
                                                       {30.4, 73.8, 272.6},
                                                       {3842.3, 3941.1, 2584.3}};
  const std::array<double, 3> bytes = {8, 64 << 10, 1 << 20};
  std::vector<cal::Point> points;
  const auto kinds = cal::kinds();
  ASSERT_EQ(kinds.size(), measured.size());
  for (std::size_t k = 0; k < kinds.size(); ++k)
    for (std::size_t i = 0; i < bytes.size(); ++i)
      points.push_back(cal::Point{kinds[k], 2, bytes[i], measured[k][i], 5});
  dist::sim::Network start;
  start.cores_per_node = 2;
  const cal::Fit fit = cal::fit_network(start, points);
  EXPECT_NO_THROW(dist::sim::check_network(fit.network));
  EXPECT_TRUE(std::isfinite(fit.rms_log_error));
}

TEST(CalibrateFit, NoPointsIsAnInvalidArgument) {
  EXPECT_THROW(cal::fit_network(dist::sim::Network{}, {}), dist::InvalidArgument);
}

}  // namespace
