// The network model (Cluster::network): predicted clocks, the report, the presets against the
// published figures they come from, and the model's argument errors.
#include "dist/predict.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "dist/dist.hpp"

namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using dist::sim::Cluster;
using dist::sim::Network;
using dist::sim::Prediction;

// Round figures: 1 GB/s is 1,000 bytes per microsecond.
Network simple_network() {
  Network n;
  n.name = "simple";
  n.intra = {1.0, 1.0};
  n.nic = {10.0, 0.5};
  n.nics_per_node = 1;
  n.call_overhead_us = 0;
  n.compute_scale = 0;  // only the calls and advance() count
  return n;
}

Cluster predicting(int nodes, int ranks_per_node, Network net = simple_network()) {
  Cluster c;
  c.nodes = nodes;
  c.ranks_per_node = ranks_per_node;
  c.schedule = dist::sim::Schedule::deterministic;
  c.network = std::move(net);
  return c;
}

double busbw_gbps(double bytes, double us, int n) { return 2.0 * (n - 1) / n * bytes / us / 1e3; }

const dist::sim::CallTime* find_call(const dist::sim::RankPrediction& r, const std::string& kind) {
  for (const auto& c : r.calls)
    if (c.kind == kind) return &c;
  return nullptr;
}

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

TEST(Predict, ARunPredictsWhatTheModelEstimates) {
  const Cluster c = predicting(1, 4);
  const std::size_t floats = 1 << 18;  // 1 MiB
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    std::vector<float> v(floats, 1.0f);
    dist::all_reduce(std::span<float>(v));
      },
      p);
  const auto e = dist::sim::estimate(c, "all_reduce", floats * sizeof(float));
  ASSERT_EQ(p.ranks.size(), 4u);
  EXPECT_DOUBLE_EQ(p.step_us(), e.us);
  for (const auto& r : p.ranks) {
    EXPECT_DOUBLE_EQ(r.total_us, e.us);
    EXPECT_DOUBLE_EQ(r.comm_us, e.us);
    const auto* call = find_call(r, "all_reduce");
    ASSERT_NE(call, nullptr);
    EXPECT_EQ(call->calls, 1);
    EXPECT_EQ(call->group, "world");
    EXPECT_DOUBLE_EQ(call->bytes, floats * sizeof(float));
  }
  EXPECT_THAT(p.summary(), HasSubstr("predicted step time"));
  EXPECT_THAT(p.summary(), HasSubstr("all_reduce on world: 1 calls, 1.0 MiB"));
}

// A broadcast is a chain from its root: with 1 µs hops and 1 GB/s, 4,000 bytes stream through a
// link in 4 µs. Each rank is done once the buffer has passed it; the root goes on once its data
// has left, not when the chain's last rank has it.
TEST(Predict, ABroadcastsRootGoesOnOnceItsDataHasLeft) {
  Network net = simple_network();
  net.call_overhead_us = 0.5;
  Cluster c = predicting(1, 4, net);
  const auto path = (std::filesystem::temp_directory_path() / "dist_predict_chain.json").string();
  c.trace = path;
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    std::vector<float> v(1000, 1.0f);
    dist::broadcast(std::span<float>(v), 1);  // the chain 1, 2, 3, 0
      },
      p);
  const auto e = dist::sim::estimate(c, "broadcast", 4000);
  EXPECT_DOUBLE_EQ(e.us, 0.5 + 3 * 1 + 4);  // overhead, three hops, the transfer
  EXPECT_DOUBLE_EQ(e.back_to_back_us, 0.5 + 4);
  ASSERT_EQ(p.ranks.size(), 4u);
  EXPECT_DOUBLE_EQ(p.ranks[1].total_us, 0.5 + 4);          // the root
  EXPECT_DOUBLE_EQ(p.ranks[2].total_us, 0.5 + 1 + 4);      // a hop down the chain
  EXPECT_DOUBLE_EQ(p.ranks[0].total_us, 0.5 + 3 * 1 + 4);  // the chain's end: the whole call
  EXPECT_DOUBLE_EQ(p.step_us(), e.us);
  for (const auto& r : p.ranks) EXPECT_DOUBLE_EQ(r.late_peers_us, 0) << "rank " << r.rank;
  // The trace shows each rank's own end.
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  std::vector<double> ends(4, -1);
  for (const auto& ev : trace.at("traceEvents"))
    if (ev.value("ph", "") == "X")
      ends.at(ev.at("tid").get<std::size_t>()) =
          ev.at("ts").get<double>() + ev.at("dur").get<double>();
  EXPECT_NEAR(ends[1], 0.5 + 4, 1e-3);
  EXPECT_NEAR(ends[0], 0.5 + 3 + 4, 1e-3);
  std::filesystem::remove(path);
}

// Back to back, a rank's next broadcast starts while the chain still carries the last one, as
// OpenMPI's and NCCL's do: each call costs a rank its overhead and the transfer, and the hops are
// paid once. A late rank down the chain holds up the ranks after it, and is reported as their
// late peer.
TEST(Predict, BackToBackBroadcastsOverlapAsAPipeline) {
  Network net = simple_network();
  net.call_overhead_us = 0.5;
  const Cluster c = predicting(1, 4, net);
  constexpr int calls = 10;
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    std::vector<float> v(1000, 1.0f);
    for (int i = 0; i < calls; ++i) dist::broadcast(std::span<float>(v), 0);
      },
      p);
  const auto e = dist::sim::estimate(c, "broadcast", 4000);
  EXPECT_DOUBLE_EQ(p.step_us(), 3 * 1 + calls * e.back_to_back_us);
  EXPECT_LT(p.step_us(), calls * e.us);
  EXPECT_DOUBLE_EQ(p.ranks[0].total_us, calls * e.back_to_back_us);
  Prediction late;
  dist::sim::run(
      c,
      [&] {
    if (dist::get_rank() == 2) dist::sim::advance(100us);
    std::vector<float> v(1000, 1.0f);
    dist::broadcast(std::span<float>(v), 0);
      },
      late);
  EXPECT_DOUBLE_EQ(late.ranks[0].total_us, 0.5 + 4);        // the root does not wait for rank 2
  EXPECT_DOUBLE_EQ(late.ranks[1].total_us, 100.5 - 1 + 4);  // its receiver must have begun
  EXPECT_DOUBLE_EQ(late.ranks[3].total_us, 100.5 + 1 + 4);
  // Each rank after the late one ends 98 µs after it would have with every peer on time.
  EXPECT_DOUBLE_EQ(late.ranks[1].late_peers_us, 98);
  EXPECT_DOUBLE_EQ(late.ranks[3].late_peers_us, 98);
  EXPECT_DOUBLE_EQ(late.ranks[2].late_peers_us, 0);
  EXPECT_DOUBLE_EQ(late.ranks[0].late_peers_us, 0);
}

TEST(Predict, ReturnsTheRanksResultsAndFillsThePredictionOfAFailedRun) {
  const Cluster c = predicting(1, 2);
  Prediction p;
  const auto ranks = dist::sim::run(
      c, [] { return dist::get_rank() * 10; }, p);
  EXPECT_EQ(ranks, (std::vector<int>{0, 10}));
  EXPECT_EQ(p.ranks.size(), 2u);
  // Rank 1 never calls the barrier: the run fails, and what was predicted until then is kept.
  Prediction failed;
  try {
    dist::sim::run(
        c,
        [] {
      dist::sim::advance(5us);
      if (dist::get_rank() == 0) dist::barrier();
        },
        failed);
    ADD_FAILURE() << "the run should have failed";
  } catch (const dist::sim::RunError& e) {
    EXPECT_TRUE(e.failed_with<dist::DeadlockError>(0));
  }
  ASSERT_EQ(failed.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(failed.ranks[1].total_us, 5);
  EXPECT_DOUBLE_EQ(failed.ranks[1].compute_us, 5);
}

TEST(Predict, ALatePeerDelaysTheOthersAndIsReported) {
  const Cluster c = predicting(1, 4);
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    if (dist::get_rank() == 3) dist::sim::advance(100us);
    dist::barrier();
      },
      p);
  const double cost = dist::sim::estimate(c, "barrier", 0).us;
  for (const auto& r : p.ranks) EXPECT_DOUBLE_EQ(r.total_us, 100 + cost) << "rank " << r.rank;
  EXPECT_DOUBLE_EQ(p.ranks[0].late_peers_us, 100);
  EXPECT_DOUBLE_EQ(p.ranks[3].late_peers_us, 0);
  EXPECT_DOUBLE_EQ(p.ranks[3].compute_us, 100);
  EXPECT_EQ(p.slowest_rank() >= 0, true);
}

TEST(Predict, NowReadsTheRanksPredictedClock) {
  const Cluster c = predicting(1, 2);
  const double cost = dist::sim::estimate(c, "all_reduce", 4000).us;
  std::vector<double> took(2);
  dist::sim::run(c, [&] {
    dist::sim::advance(10us);
    const auto before = dist::sim::now();
    std::vector<float> v(1000, 1.0f);
    dist::all_reduce(std::span<float>(v));
    took[static_cast<std::size_t>(dist::get_rank())] = (dist::sim::now() - before).count();
    EXPECT_DOUBLE_EQ(before.count(), 10);
  });
  EXPECT_DOUBLE_EQ(took[0], cost);
  EXPECT_DOUBLE_EQ(took[1], cost);
}

TEST(Predict, ComputeOverlapsAnAsyncCollective) {
  const Cluster c = predicting(1, 2);
  const double cost = dist::sim::estimate(c, "all_reduce", 4 << 20).us;
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    std::vector<float> v(1 << 20, 1.0f);
    auto work = dist::all_reduce_async(std::span<float>(v));
    dist::sim::advance(std::chrono::nanoseconds(static_cast<long long>(cost * 2e3)));
    work.wait();
      },
      p);
  for (const auto& r : p.ranks) {
    EXPECT_NEAR(r.total_us, 2 * cost, 1e-6);
    EXPECT_NEAR(r.comm_us, 0, 1e-6);  // the wait found it done
  }
}

TEST(Predict, SendsFromOneRankQueueOnItsPort) {
  const Cluster c = predicting(1, 3);
  const std::size_t bytes = 1'000'000;  // 1,000 us at 1 GB/s
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    std::vector<std::uint8_t> buf(bytes);
    if (dist::get_rank() == 0) {
      auto a = dist::isend(std::span<const std::uint8_t>(buf), 1);
      auto b = dist::isend(std::span<const std::uint8_t>(buf), 2);
      a.wait();
      b.wait();
    } else {
      dist::recv(std::span<std::uint8_t>(buf), 0);
    }
      },
      p);
  // Both leave through rank 0's port one after the other: the second ends a transfer later.
  const double one = 1.0 + 1000.0;
  const double first = std::min(p.ranks[1].total_us, p.ranks[2].total_us);
  const double second = std::max(p.ranks[1].total_us, p.ranks[2].total_us);
  EXPECT_NEAR(first, one, 1e-6);
  EXPECT_NEAR(second, one + 1000.0, 1e-6);
  EXPECT_NEAR(p.ranks[0].total_us, second, 1e-6);
}

TEST(Predict, ACrossNodeSendGoesThroughTheNics) {
  const Cluster c = predicting(2, 1);
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    std::vector<std::uint8_t> buf(500'000);  // 1,000 us at 0.5 GB/s
    if (dist::get_rank() == 0) dist::send(std::span<const std::uint8_t>(buf), 1);
    else dist::recv(std::span<std::uint8_t>(buf), 0);
      },
      p);
  EXPECT_NEAR(p.ranks[1].total_us, 10.0 + 1000.0, 1e-6);
  EXPECT_EQ(find_call(p.ranks[0], "send")->calls, 1);
}

TEST(Predict, ASendOnANodeWithMoreRanksThanCoresWaitsAHandOver) {
  Cluster c = predicting(1, 4);
  c.network->cores_per_node = 2;
  c.network->handover_us = 0.5;
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    std::vector<std::uint8_t> buf(1'000);  // 1 us at 1 GB/s
    if (dist::get_rank() == 0) dist::send(std::span<const std::uint8_t>(buf), 1);
    else if (dist::get_rank() == 1) dist::recv(std::span<std::uint8_t>(buf), 0);
      },
      p);
  EXPECT_NEAR(p.ranks[1].total_us, 1.0 + 0.5 + 1.0, 1e-6);  // latency, hand-over, bytes
}

TEST(Predict, UnevenAllToAllIsReportedByItsName) {
  const Cluster c = predicting(1, 2);
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    std::vector<float> in(4, 1.0f), out(4);
    const std::vector<std::int64_t> splits{2, 2};
    dist::all_to_all(std::span<float>(out), std::span<const float>(in),
                     std::span<const std::int64_t>(splits), std::span<const std::int64_t>(splits));
      },
      p);
  EXPECT_NE(find_call(p.ranks[0], "all_to_all_v"), nullptr);
  EXPECT_GT(p.step_us(), 0);
}

// Bucketed gradient all_reduce: smaller buckets pay the per-call latency more often, so the
// model predicts more time for the same bytes, and the run's prediction is the sum of the calls'.
double bucketed(std::size_t total_floats, std::size_t bucket_floats) {
  Cluster c = dist::sim::dgx_h100(2);
  c.network->compute_scale = 0;  // the calls only: the vectors' filling would count otherwise
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    std::vector<float> grads(total_floats, 1.0f);
    for (std::size_t at = 0; at < total_floats; at += bucket_floats)
      dist::all_reduce(std::span<float>(grads.data() + at, bucket_floats));
      },
      p);
  double sum = 0;
  for (std::size_t at = 0; at < total_floats; at += bucket_floats)
    sum += dist::sim::estimate(c, "all_reduce", bucket_floats * sizeof(float)).us;
  EXPECT_NEAR(p.ranks[0].comm_us, sum, sum * 1e-9);
  return p.ranks[0].comm_us;
}

TEST(Predict, SmallerBucketsPredictMoreTime) {
  const std::size_t total = 1 << 20;
  EXPECT_GT(bucketed(total, total / 64), bucketed(total, total / 4));
}

TEST(Predict, TheTraceHoldsThePredictedTimes) {
  const auto path = (std::filesystem::temp_directory_path() / "dist_predict_trace.json").string();
  Cluster c = predicting(1, 2);
  c.trace = path;
  Prediction p;
  dist::sim::run(
      c,
      [&] {
    dist::sim::advance(50us);
    std::vector<float> v(1000, 1.0f);
    dist::all_reduce(std::span<float>(v));
      },
      p);
  const double cost = dist::sim::estimate(c, "all_reduce", 4000).us;
  std::ifstream in(path);
  const auto json = nlohmann::json::parse(in);
  int slices = 0;
  for (const auto& e : json.at("traceEvents")) {
    if (e.value("ph", "") != "X") continue;
    ++slices;
    EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 50);
    EXPECT_NEAR(e.at("dur").get<double>(), cost, 1e-3);
  }
  EXPECT_EQ(slices, 2);
  std::filesystem::remove(path);
}

TEST(Predict, ProfilesRoundTripAndBadOnesAreRefused) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto good = (dir / "dist_profile_good.json").string();
  Network n = simple_network();
  n.cores_per_node = 2;
  n.handover_us = 0.6;
  n.reduce_gbps = 3.5;
  n.cache_bytes = 1 << 20;
  n.half_duplex = true;
  n.algorithms = Network::Algorithms::open_mpi;
  n.intra_factors = {{1024, 0.5}, {65536, 1.5}};
  n.source = "a test";
  n.save(good);
  const Network back = Network::load(good);
  EXPECT_EQ(back.name, "simple");
  EXPECT_EQ(back.cores_per_node, 2);
  EXPECT_DOUBLE_EQ(back.reduce_gbps, 3.5);
  EXPECT_DOUBLE_EQ(back.handover_us, 0.6);
  EXPECT_DOUBLE_EQ(back.cache_bytes, 1 << 20);
  EXPECT_TRUE(back.half_duplex);
  EXPECT_EQ(back.algorithms, Network::Algorithms::open_mpi);
  EXPECT_DOUBLE_EQ(back.nic.bandwidth_gbps, 0.5);
  ASSERT_EQ(back.intra_factors.size(), 2u);
  EXPECT_DOUBLE_EQ(back.intra_factors[1].bytes, 65536);
  EXPECT_DOUBLE_EQ(back.intra_factors[1].factor, 1.5);
  const Cluster c = dist::sim::this_machine(3, good);
  EXPECT_EQ(c.world_size(), 3);
  EXPECT_EQ(c.network->source, "a test");

  const auto bad = (dir / "dist_profile_bad.json").string();
  std::ofstream(bad) << R"({"intra": {"latency_us": "fast"}})";
  EXPECT_THAT([&] { Network::load(bad); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("intra.latency_us")));
  std::ofstream(bad)
      << R"({"intra_factors": [{"bytes": 4096, "factor": 1}, {"bytes": 1024, "factor": 1}]})";
  EXPECT_THAT([&] { Network::load(bad); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("intra_factors[1].bytes")));
  std::ofstream(bad) << R"({"intra_factors": [{"bytes": 4096}]})";
  EXPECT_THAT([&] { Network::load(bad); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("intra_factors[0]")));
  std::ofstream(bad) << R"({"algorithms": "mpich"})";
  EXPECT_THAT([&] { Network::load(bad); }, ::testing::ThrowsMessage<dist::InvalidArgument>(
                                               HasSubstr("'algorithms': \"mpich\"")));
  std::ofstream(bad) << R"({"handover_us": -1})";
  EXPECT_THAT([&] { Network::load(bad); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("handover_us")));
  std::ofstream(bad) << R"({"efficiency": 1.5})";
  EXPECT_THAT([&] { Network::load(bad); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("efficiency")));
  EXPECT_THAT([&] { Network::load((dir / "dist_no_such_profile.json").string()); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("dist_calibrate")));
  unsetenv("DIST_NETWORK_PROFILE");
  EXPECT_THAT([] { dist::sim::this_machine(2); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("DIST_NETWORK_PROFILE")));
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

TEST(Predict, MisuseIsAnInvalidArgument) {
  Cluster concurrent = predicting(1, 2);
  concurrent.schedule = dist::sim::Schedule::concurrent;
  EXPECT_THAT([&] { dist::sim::run(concurrent, [] {}); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("deterministic")));
  Cluster bad = predicting(1, 2);
  bad.network->intra.bandwidth_gbps = 0;
  EXPECT_THAT([&] { dist::sim::run(bad, [] {}); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("intra.bandwidth_gbps")));
  Prediction p;
  const Cluster none{.nodes = 1, .ranks_per_node = 2};
  EXPECT_THAT(
      [&] {
    dist::sim::run(
        none, [] {}, p);
      },
      ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("no network")));
  EXPECT_THAT([] { dist::sim::estimate(dist::sim::dgx_h100(1), "all_reduse", 8); },
              ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("all_reduse")));
  EXPECT_THAT(
      [] {
    dist::sim::estimate(dist::sim::dgx_h100(1), "barrier", 0, {0, 9});
      },
      ::testing::ThrowsMessage<dist::InvalidArgument>(HasSubstr("rank 9")));
  EXPECT_THROW(dist::sim::dgx_h100(0), dist::InvalidArgument);
  EXPECT_THROW(dist::sim::advance(-1ns), dist::InvalidArgument);
  dist::sim::advance(1ms);  // outside a run: nothing to advance, no error
}

}  // namespace
