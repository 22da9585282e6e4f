// The front end without any backend linked or context bound: MMEngine's non-distributed answers
// (world size 1, rank 0, no backend), identity collectives, and the errors that still apply.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "dist/dist.hpp"

namespace {

using ::testing::HasSubstr;

TEST(NotDistributed, QueriesGiveMMEngineAnswers) {
  EXPECT_FALSE(dist::is_distributed());
  EXPECT_EQ(dist::get_world_size(), 1);
  EXPECT_EQ(dist::get_rank(), 0);
  EXPECT_FALSE(dist::get_backend().has_value());
  EXPECT_EQ(dist::get_dist_info(), std::make_pair(0, 1));
  EXPECT_TRUE(dist::is_main_process());
  EXPECT_EQ(dist::get_local_rank(), 0);
  EXPECT_EQ(dist::get_local_size(), 1);
  EXPECT_FALSE(dist::get_local_group().has_value());
  EXPECT_EQ(dist::get_comm_device(), dist::Device::cpu());
  EXPECT_NO_THROW(dist::barrier());
  EXPECT_TRUE(dist::barrier_async().is_completed());
}

TEST(NotDistributed, CollectivesAreTheIdentityAndSkipOpValidation) {
  std::vector<int> v{1, 2, 3};
  dist::all_reduce(v, "avg");  // MMEngine returns before looking at the op
  dist::all_reduce(v, dist::ReduceOp::band);
  dist::broadcast(v, 0);
  dist::reduce(v, 0);
  EXPECT_EQ(v, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(dist::all_gather(v), (std::vector<std::vector<int>>{{1, 2, 3}}));
  EXPECT_EQ(dist::gather(v), (std::vector<std::vector<int>>{{1, 2, 3}}));
  EXPECT_EQ(dist::reduce_scatter(v), v);
  EXPECT_EQ(dist::all_to_all(v), v);
  std::vector<int> out(3);
  dist::scatter(out, std::vector<std::vector<int>>{{4, 5, 6}});
  EXPECT_EQ(out, (std::vector<int>{4, 5, 6}));
}

TEST(NotDistributed, StructuralErrorsStillApply) {
  std::vector<float> in(4), wrong(3);
  EXPECT_THROW(dist::all_gather_async(std::span<float>(wrong), std::span<float>(in)),
               dist::InvalidArgument);
  try {
    dist::send(in, 1);
    FAIL() << "send outside a distributed context must fail";
  } catch (const dist::InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'dst' = 1 is out of range for a group of 1 ranks"));
  }
  EXPECT_THROW(dist::recv(in, 0), dist::InvalidArgument);  // its own rank
  EXPECT_THROW(dist::new_group({0}), dist::NotInitialized);
}

TEST(NotDistributed, MasterOnlyRunsOnTheOnlyRank) {
  int calls = 0;
  auto twice = dist::master_only([&](int x) {
    ++calls;
    return 2 * x;
  });
  EXPECT_EQ(twice(21), std::optional<int>(42));
  dist::master_only([&] { ++calls; })();
  EXPECT_EQ(calls, 2);
}

TEST(NotDistributed, TensorCollectivesKeepShapes) {
  auto t = dist::Tensor::from(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  dist::all_reduce(t, "mean");
  EXPECT_EQ(t.values<double>()[5], 6.0);
  const auto parts = dist::all_gather(t);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].shape(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(parts[0].values<double>()[1], 2.0);
  EXPECT_EQ(dist::reduce_scatter(t).shape(), (std::vector<std::int64_t>{2, 3}));
}

}  // namespace
