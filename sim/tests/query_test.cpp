// The query/control functions on sim clusters of several node shapes (rank, sizes, backend, local
// group, master_only), and their non-distributed answers outside any run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/tests/sim_test_util.hpp"

namespace {

using namespace sim_test;
using ::testing::HasSubstr;

struct Answers {
  int rank = -2, world_size = -2, local_rank = -2, local_size = -2;
  std::optional<dist::Backend> backend;
  std::optional<std::vector<int>> local_ranks;
  int rank_in_local = -2, local_group_size = -2;
  std::pair<int, int> dist_info{-2, -2};
  bool main = false, distributed = false;
  std::optional<int> master_result;
  bool comm_on_cpu = false;
};

Answers ask(std::atomic<int>& calls, std::atomic<int>& void_calls) {
  Answers a;
  a.rank = dist::get_rank();
  a.world_size = dist::get_world_size();
  a.local_rank = dist::get_local_rank();
  a.local_size = dist::get_local_size();
  a.backend = dist::get_backend();
  if (const auto local = dist::get_local_group()) {
    a.local_ranks = local->ranks();
    a.rank_in_local = dist::get_rank(*local);
    a.local_group_size = dist::get_world_size(*local);
  }
  a.dist_info = dist::get_dist_info();
  a.main = dist::is_main_process();
  a.distributed = dist::is_distributed();
  a.master_result = dist::master_only([&](int x) {
    ++calls;
    return x * 2;
  })(21);
  dist::master_only([&] { ++void_calls; })();
  a.comm_on_cpu = dist::get_comm_device().is_cpu();
  dist::barrier();
  return a;
}

class Query : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(Query, AnswersMatchTheClusterShape) {
  const auto [nodes, per_node] = GetParam();
  std::atomic<int> calls{0}, void_calls{0};
  const auto got = dist::sim::run(cluster(nodes, per_node),
                                  [&] { return ask(calls, void_calls); });
  const int n = nodes * per_node;
  ASSERT_EQ(static_cast<int>(got.size()), n);
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(void_calls.load(), 1);
  for (int r = 0; r < n; ++r) {
    const Answers& a = got[static_cast<std::size_t>(r)];
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(a.rank, r);
    EXPECT_EQ(a.world_size, n);
    EXPECT_EQ(a.backend, dist::Backend::sim);
    EXPECT_EQ(a.local_rank, r % per_node);
    EXPECT_EQ(a.local_size, per_node);
    std::vector<int> node;
    for (int i = 0; i < per_node; ++i) node.push_back(r / per_node * per_node + i);
    EXPECT_EQ(a.local_ranks, node);
    EXPECT_EQ(a.rank_in_local, r % per_node);
    EXPECT_EQ(a.local_group_size, per_node);
    EXPECT_EQ(a.dist_info, std::pair(r, n));
    EXPECT_EQ(a.main, r == 0);
    EXPECT_TRUE(a.distributed);
    EXPECT_EQ(a.master_result, r == 0 ? std::optional<int>(42) : std::nullopt);
    EXPECT_TRUE(a.comm_on_cpu);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Query,
                         ::testing::Values(std::pair{1, 1}, std::pair{1, 4}, std::pair{2, 4},
                                           std::pair{3, 2}),
                         [](const ::testing::TestParamInfo<std::pair<int, int>>& p) {
                           return std::to_string(p.param.first) + "x" +
                                  std::to_string(p.param.second);
                         });

// The local group is a real communicator: an all_reduce over it sums the node's ranks only.
TEST(LocalGroup, CommunicatesWithinTheNode) {
  const auto got = dist::sim::run(cluster(3, 2), [] {
    std::vector<std::int32_t> v{dist::get_rank()};
    dist::all_reduce(v, dist::ReduceOp::sum, *dist::get_local_group());
    return v.front();
  });
  EXPECT_EQ(got, (std::vector<std::int32_t>{1, 1, 5, 5, 9, 9}));
}

TEST(NotDistributed, QueriesAnswerLikeMMEngine) {
  std::atomic<int> calls{0}, void_calls{0};
  const Answers a = ask(calls, void_calls);
  EXPECT_EQ(a.rank, 0);
  EXPECT_EQ(a.world_size, 1);
  EXPECT_EQ(a.backend, std::nullopt);
  EXPECT_EQ(a.local_rank, 0);
  EXPECT_EQ(a.local_size, 1);
  EXPECT_EQ(a.local_ranks, std::nullopt);
  EXPECT_EQ(a.dist_info, std::pair(0, 1));
  EXPECT_TRUE(a.main);
  EXPECT_FALSE(a.distributed);
  EXPECT_EQ(a.master_result, 42);
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(void_calls.load(), 1);
  EXPECT_TRUE(dist::barrier_async().is_completed());
  EXPECT_THROW(dist::new_group({0}), dist::NotInitialized);
}

TEST(NotDistributed, CollectivesAreTheIdentity) {
  const auto in = input<float>(0, 30);
  auto v = in;
  dist::all_reduce(v, "avg");  // an unknown op is not even looked at, as in MMEngine
  EXPECT_TRUE(bits_equal(v, in));
  dist::all_reduce(v, dist::ReduceOp::product);
  dist::reduce(v, 0, dist::ReduceOp::min);
  dist::broadcast(v, 0);
  EXPECT_TRUE(bits_equal(v, in));
  EXPECT_TRUE(bits_equal(dist::all_gather(in), std::vector<std::vector<float>>{in}));
  EXPECT_TRUE(bits_equal(dist::gather(in), std::vector<std::vector<float>>{in}));
  EXPECT_TRUE(bits_equal(dist::reduce_scatter(in, "mean"), in));
  EXPECT_TRUE(bits_equal(dist::all_to_all(in), in));
  std::vector<float> s(in.size());
  dist::scatter(s, std::vector<std::vector<float>>{in});
  EXPECT_TRUE(bits_equal(s, in));
  dist::Tensor t = dist::Tensor::from(in, {5, 6});
  dist::all_reduce(t, "sum");
  EXPECT_TRUE(bits_equal(values_of<float>(t), in));
  const auto parts = dist::all_gather(t);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].shape(), (std::vector<std::int64_t>{5, 6}));
  EXPECT_TRUE(bits_equal(values_of<float>(parts[0]), in));
}

TEST(UnknownOpName, RejectedOnEveryRankOfATwoRankRun) {
  const auto err = run_error(world(2), [] {
    std::vector<float> v{1.f};
    dist::all_reduce(v, "avg");
  });
  ASSERT_TRUE(err.has_value());
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(err->failed_with<dist::InvalidArgument>(r)) << "rank " << r;
    EXPECT_THAT(err->outcomes()[static_cast<std::size_t>(r)].message, HasSubstr("'avg'"));
  }
  EXPECT_THAT(err->what(), HasSubstr("avg"));
}

}  // namespace
