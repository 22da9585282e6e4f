// A split by layout holds each line once: the ranks of a line that bring the same list share the
// first one's copy (World::shared_rank_list), and a rank whose list differs keeps its own.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/layout.hpp"
#include "dist/dist.hpp"
#include "dist/mesh.hpp"
#include "dist/sim/run.hpp"
#include "sim/world.hpp"

namespace {

// Rank r's layout of lines of 4 ranks 2 apart over 8 ranks (by rule), or `lists` (explicit).
dist::core::Layout rule_layout(int r) { return dist::core::strided_layout(8, 4, 2, r); }
dist::core::Layout listed(std::vector<std::vector<int>> lists, int r) {
  return dist::core::listed_layout(
      std::make_shared<const std::vector<std::vector<int>>>(std::move(lists)), r);
}

TEST(SharedLine, RanksOfOneLineShareOneListAndADifferentListIsKeptApart) {
  dist::sim::Cluster cluster{
      .nodes = 1, .ranks_per_node = 8, .schedule = dist::sim::Schedule::deterministic};
  dist::sim::World world(cluster);
  const std::vector<int> line{1, 3, 5, 7};
  const auto first = world.shared_rank_list(rule_layout(1));
  const auto second = world.shared_rank_list(rule_layout(5));
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(*first, line);
  // Another line or another layout: a list of their own.
  EXPECT_EQ(*world.shared_rank_list(rule_layout(2)), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_NE(world.shared_rank_list(rule_layout(2)).get(), first.get());
  EXPECT_NE(world.shared_rank_list(dist::core::strided_layout(8, 2, 2, 1)).get(), first.get());
  // A rank that disagrees with its line under the same fingerprint (explicit lists, or a rule
  // where a listed line was): a list of its own, and the shared one is never changed.
  auto odd = listed({{0, 2, 4, 6}, {1, 3, 5, 7}}, 3);
  const auto listed_first = world.shared_rank_list(odd);
  EXPECT_EQ(*listed_first, line);
  auto wrong = listed({{0, 2, 4, 6}, {1, 3, 5}}, 3);
  wrong.hash = odd.hash;
  EXPECT_NE(world.shared_rank_list(wrong).get(), listed_first.get());
  EXPECT_EQ(*world.shared_rank_list(wrong), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(world.shared_rank_list(odd).get(), world.shared_rank_list(odd).get());
  auto ruled = rule_layout(3);
  ruled.hash = odd.hash;
  EXPECT_EQ(*world.shared_rank_list(ruled), line);
  EXPECT_NE(world.shared_rank_list(ruled).get(), world.shared_rank_list(odd).get());
  EXPECT_EQ(*first, line) << "a shared list is never changed";
}

TEST(SharedLine, AMeshsSplitsGiveEveryRankItsLine) {
  // Through the whole path (init_device_mesh's splits in a sim run): every rank's groups hold
  // the right ranks, the lines shared or not.
  dist::sim::Cluster cluster{
      .nodes = 4, .ranks_per_node = 4, .schedule = dist::sim::Schedule::deterministic};
  const auto ok = dist::sim::run(cluster, [] {
    const int r = dist::get_rank();
    const auto mesh = dist::init_device_mesh({4, 4}, {"dp", "tp"});
    const auto dp = mesh.get_group("dp").ranks();
    const auto tp = mesh.get_group("tp").ranks();
    return dp == std::vector<int>{r % 4, r % 4 + 4, r % 4 + 8, r % 4 + 12} &&
           tp == std::vector<int>{r / 4 * 4, r / 4 * 4 + 1, r / 4 * 4 + 2, r / 4 * 4 + 3};
  });
  for (std::size_t r = 0; r < ok.size(); ++r) EXPECT_TRUE(ok[r]) << "rank " << r;
}

}  // namespace
