// The network model in a run (Cluster::network): predicted clocks, the report, the trace, profiles
// and the model's argument errors. Its formulas, call by call: predict_formulas_test.cpp.
#include "dist/sim/predict.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "dist/dist.hpp"
#include "sim/tests/predicting.hpp"

namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using dist::sim::Cluster;
using dist::sim::Network;
using dist::sim::Prediction;
using predict_test::predicting;
using predict_test::simple_network;

const dist::sim::CallTime* find_call(const dist::sim::RankPrediction& r, const std::string& kind) {
  for (const auto& c : r.calls)
    if (c.kind == kind) return &c;
  return nullptr;
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
