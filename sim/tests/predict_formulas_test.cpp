// The network model's formulas, call by call (dist::sim::estimate): the presets against the
// published figures they come from, NCCL's algorithms by size, the CPU terms (reductions, caches,
// size factors, the node's copy rate, half-duplex ranks, cores), Open MPI's trees, and the fabric.
#include <gtest/gtest.h>

#include "dist/sim/predict.hpp"
#include "sim/tests/predicting.hpp"

namespace {

using dist::sim::Cluster;
using dist::sim::Network;
using predict_test::predicting;
using predict_test::simple_network;

double busbw_gbps(double bytes, double us, int n) { return 2.0 * (n - 1) / n * bytes / us / 1e3; }

TEST(Predict, DgxH100ReproducesNcclTestsBusbw) {
  // nccl-tests on 8 H100s (nccl-tests issue 212): ring all_reduce ~370 GB/s busbw at large
  // sizes, NVLS ~480 GB/s. NCCL_ALGO=Ring is the preset without in-switch reduction.
  const std::size_t bytes = std::size_t{8} << 30;
  Cluster ring = dist::sim::dgx_h100(1);
  ring.network->nvls_gbps = 0;
  const auto r = dist::sim::estimate(ring, "all_reduce", bytes);
  EXPECT_EQ(r.algorithm, "ring");
  EXPECT_NEAR(busbw_gbps(bytes, r.us, 8) / 370.0, 1.0, 0.15);
  const auto nvls = dist::sim::estimate(dist::sim::dgx_h100(1), "all_reduce", bytes);
  EXPECT_EQ(nvls.algorithm, "nvls");
  EXPECT_NEAR(busbw_gbps(bytes, nvls.us, 8) / 480.0, 1.0, 0.15);
}

TEST(Predict, ChoosesTheFasterAlgorithmBySize) {
  // Across many nodes a tree's logarithmic latency wins for small messages, the ring's smaller
  // bulk term for large ones, as NCCL's tuner chooses.
  EXPECT_EQ(dist::sim::estimate(dist::sim::dgx_h100(64), "all_reduce", 8).algorithm, "tree");
  EXPECT_EQ(
      dist::sim::estimate(dist::sim::dgx_h100(2), "all_reduce", std::size_t{4} << 30).algorithm,
      "ring");
  // Across nodes a ring runs at the NICs' rate, below NVLink's.
  const auto one = dist::sim::estimate(dist::sim::a100_hdr(1), "all_gather", 1 << 30);
  const auto two = dist::sim::estimate(dist::sim::a100_hdr(2), "all_gather", 1 << 30);
  EXPECT_GT(two.us, one.us);
}

TEST(Predict, CpuTermsSlowReductionsAndCallsLargerThanTheCache) {
  Cluster c = predicting(1, 2);
  const double copy_only = dist::sim::estimate(c, "all_reduce", 1'000'000).us;
  c.network->reduce_gbps = 0.5;  // 500 B/us: half of the 1,000,000 bytes combined per rank
  EXPECT_NEAR(dist::sim::estimate(c, "all_reduce", 1'000'000).us, copy_only + 1000, 1e-6);
  EXPECT_NEAR(dist::sim::estimate(c, "all_gather", 1'000'000).us,
              dist::sim::estimate(predicting(1, 2), "all_gather", 1'000'000).us, 1e-9);
  c.network->reduce_gbps = 0;
  c.network->cache_bytes = 2'000'000;
  c.network->memory_gbps = 0.25;  // a quarter of the link's rate
  const double in_cache = dist::sim::estimate(c, "broadcast", 2'000'000).us;
  const double beyond = dist::sim::estimate(c, "broadcast", 2'000'001).us;
  EXPECT_NEAR(beyond - 1.0, 4 * (in_cache - 1.0), 1e-2);  // 1 us: one hop's latency
  // The memory's rate is the node's: an all_gather's two senders share it (an eighth each).
  const double gather_in_cache = dist::sim::estimate(c, "all_gather", 2'000'000).us;
  const double gather_beyond = dist::sim::estimate(c, "all_gather", 2'000'001).us;
  EXPECT_NEAR(gather_beyond - 1.0, 8 * (gather_in_cache - 1.0), 1e-1);
}

TEST(Predict, SizeFactorsScaleTheBandwidthOfEachStepsMessage) {
  Cluster c = predicting(1, 2);  // 1 us a hop, 1 GB/s = 1,000 B/us
  c.network->intra_factors = {{1'000, 0.5}, {100'000, 2.0}};
  const auto us = [&](const char* kind, double bytes) {
    return dist::sim::estimate(c, kind, static_cast<std::size_t>(bytes)).us;
  };
  // A chain's message is the whole buffer: 1,000 B at half the rate, 100,000 B at twice.
  EXPECT_NEAR(us("broadcast", 1'000), 1 + 2, 1e-9);
  EXPECT_NEAR(us("broadcast", 100'000), 1 + 50, 1e-9);
  // Between the points the factor is linear in log(bytes): 1.25 at 10,000 B.
  EXPECT_NEAR(us("broadcast", 10'000), 1 + 8, 1e-9);
  // Held past either end.
  EXPECT_NEAR(us("broadcast", 100), 1 + 0.2, 1e-9);
  EXPECT_NEAR(us("broadcast", 1'000'000), 1 + 500, 1e-9);
  // A ring's message is a chunk (size / ranks): an all_gather of 2,000 B moves 1,000 B chunks.
  EXPECT_NEAR(us("all_gather", 2'000), 1 + 2, 1e-9);
}

TEST(Predict, ANodesCopyRateIsSharedByTheRanksSendingAtOnce) {
  Cluster c = predicting(1, 2);
  c.network->intra.latency_us = 0;
  c.network->node_gbps = 1;  // as fast as one rank's link: two senders get half each
  // A broadcast on two ranks has one sender, who keeps the whole rate; an all_gather's two
  // senders (each sending half of the size) share it.
  EXPECT_NEAR(dist::sim::estimate(c, "broadcast", 1'000'000).us, 1000, 1e-6);
  EXPECT_NEAR(dist::sim::estimate(c, "all_gather", 1'000'000).us, 1000, 1e-6);
  c.network->node_gbps = 0;
  EXPECT_NEAR(dist::sim::estimate(c, "all_gather", 1'000'000).us, 500, 1e-6);
}

TEST(Predict, AHalfDuplexRankMovesEachDirectionAtHalfItsRate) {
  Cluster c = predicting(1, 4);  // 1 us a hop, 1 GB/s = 1,000 B/us
  c.network->intra.latency_us = 0;
  const auto us = [&](const char* kind, std::size_t bytes) {
    return dist::sim::estimate(c, kind, bytes).us;
  };
  const double ring = us("all_gather", 4'000'000), exchange = us("all_to_all", 4'000'000);
  const double chain = us("broadcast", 1'000'000), fan_in = us("gather", 4'000'000);
  Cluster two = predicting(1, 2);
  two.network->intra.latency_us = 0;
  const double two_chain = dist::sim::estimate(two, "broadcast", 1'000'000).us;
  c.network->half_duplex = true;
  two.network->half_duplex = true;
  // Every rank of a ring or an exchange sends and receives in each step: twice the time.
  EXPECT_NEAR(us("all_gather", 4'000'000), 2 * ring, 1e-6);
  EXPECT_NEAR(us("all_to_all", 4'000'000), 2 * exchange, 1e-6);
  // A chain's middle ranks do both; on two ranks the root only sends and the other receives.
  EXPECT_NEAR(us("broadcast", 1'000'000), 2 * chain, 1e-6);
  EXPECT_NEAR(dist::sim::estimate(two, "broadcast", 1'000'000).us, two_chain, 1e-6);
  // A gather's root only receives, the others only send.
  EXPECT_NEAR(us("gather", 4'000'000), fan_in, 1e-6);
  // The memory's rate is each rank's own: a 4-rank chain past the cache runs at half of it
  // (both ways), where the node's three senders would have shared it.
  c.network->cache_bytes = 100'000;
  c.network->memory_gbps = 0.5;
  EXPECT_NEAR(us("broadcast", 1'000'000), 1'000'000 / 250.0, 1e-6);
  c.network->half_duplex = false;
  EXPECT_NEAR(us("broadcast", 1'000'000), 1'000'000 / (500.0 / 3), 1e-6);
}

// Network::algorithms = open_mpi: all_reduce, reduce and reduce_scatter run as Open MPI's
// binomial trees of whole buffers; the other collectives keep NCCL's formulas.
TEST(Predict, OpenMpisTreesMoveWholeBuffersUpAndDown) {
  Cluster c = predicting(1, 4);  // 1 us a hop, 1 GB/s = 1,000 B/us
  c.network->reduce_gbps = 1;
  const auto estimate = [&](const char* kind) { return dist::sim::estimate(c, kind, 1'000'000); };
  const double gather = estimate("all_gather").us, chain = estimate("broadcast").us;
  c.network->algorithms = Network::Algorithms::open_mpi;
  // Two rounds up, each a hop, the buffer and its reduction; all_reduce then two rounds down.
  EXPECT_NEAR(estimate("reduce").us, 2 * (1 + 1000 + 1000), 1e-6);
  EXPECT_NEAR(estimate("all_reduce").us, 2 * (1 + 1000 + 1000) + 2 * (1 + 1000), 1e-6);
  EXPECT_EQ(estimate("all_reduce").algorithm, "binomial");
  // reduce_scatter: the reduce, then rank 0 sends the three other shares.
  EXPECT_NEAR(estimate("reduce_scatter").us, 2 * (1 + 1000 + 1000) + 1 + 750, 1e-6);
  EXPECT_EQ(estimate("reduce_scatter").algorithm, "binomial+linear");
  EXPECT_DOUBLE_EQ(estimate("all_gather").us, gather);
  EXPECT_DOUBLE_EQ(estimate("broadcast").us, chain);
  // On two ranks NCCL's ring moves half the buffer each way; the tree moves all of it there and
  // back.
  Cluster two = predicting(1, 2);
  two.network->reduce_gbps = 1;
  EXPECT_NEAR(dist::sim::estimate(two, "all_reduce", 1'000'000).us, 2 * 1 + 1000 + 500, 1e-6);
  two.network->algorithms = Network::Algorithms::open_mpi;
  EXPECT_NEAR(dist::sim::estimate(two, "all_reduce", 1'000'000).us, 1 + 1000 + 1000 + 1 + 1000,
              1e-6);
}

TEST(Predict, MoreRanksThanCoresSlowEachCallsOverheadAndWaitAHandOverPerStep) {
  Cluster c = predicting(1, 4);  // 1 us a hop, 1 GB/s
  c.network->call_overhead_us = 2;
  c.network->reduce_gbps = 1;
  const auto gather = [&](std::size_t bytes) {
    return dist::sim::estimate(c, "all_gather", bytes).us;
  };
  const auto scatter = [&](std::size_t bytes) {
    return dist::sim::estimate(c, "reduce_scatter", bytes).us;
  };
  const double small = gather(8), large = gather(4'000'000), reduced = scatter(4'000'000);
  c.network->handover_us = 0.5;
  EXPECT_NEAR(gather(8), small, 1e-9) << "a core per rank: no hand-over";
  c.network->cores_per_node = 2;
  // Two ranks a core: the call's overhead takes twice as long (+2 us), and each of the ring's 3
  // steps waits a hand-over (+1.5 us).
  EXPECT_NEAR(gather(8), small + 2 + 1.5, 1e-9);
  // The bulk term (3/4 of 4 MB at 1 GB/s) is not slowed: the senders share the node's rate anyway.
  EXPECT_NEAR(gather(4'000'000), large + 2 + 1.5, 1e-9);
  // Nor are the reductions: the ranks of a core take turns within a step.
  EXPECT_NEAR(scatter(4'000'000), reduced + 2 + 1.5, 1e-6);
  // A send is one step (and no call overhead) between two ranks: one hand-over where they share
  // a core.
  c.network->cores_per_node = 0;
  const double send = dist::sim::estimate(c, "send", 1'000, {0, 1}).us;
  c.network->cores_per_node = 1;
  EXPECT_NEAR(dist::sim::estimate(c, "send", 1'000, {0, 1}).us, send + 0.5, 1e-9);
  c.network->cores_per_node = 4;
  EXPECT_NEAR(gather(8), small, 1e-9) << "as many cores as ranks";
}

TEST(Predict, AnOversubscribedFabricSlowsOnlyTrafficAcrossNodes) {
  Cluster c = predicting(2, 2);
  c.network->nic.latency_us = 0;
  c.network->intra.latency_us = 0;
  const auto across = dist::sim::estimate(c, "send", 1'000'000, {0, 2}).us;
  const auto within = dist::sim::estimate(c, "send", 1'000'000, {0, 1}).us;
  c.network->oversubscription = 2;
  EXPECT_NEAR(dist::sim::estimate(c, "send", 1'000'000, {0, 2}).us, 2 * across, 1e-6);
  EXPECT_NEAR(dist::sim::estimate(c, "send", 1'000'000, {0, 1}).us, within, 1e-9);
}

}  // namespace
