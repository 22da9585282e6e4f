// A split by layout holds each line once: the ranks of a line that bring the same list share the
// first one's copy (World::shared_line), and a rank whose list differs keeps its own.
#include <gtest/gtest.h>

#include <vector>

#include "dist/dist.hpp"
#include "dist/mesh.hpp"
#include "dist/sim.hpp"
#include "sim/world.hpp"

namespace {

TEST(SharedLine, RanksOfOneLineShareOneListAndADifferentListIsKeptApart) {
  dist::sim::Cluster cluster{
      .nodes = 1, .ranks_per_node = 8, .schedule = dist::sim::Schedule::deterministic};
  dist::sim::World world(cluster);
  const std::vector<int> line{1, 3, 5, 7};
  const auto first = world.shared_line(42, 1, line);
  const auto second = world.shared_line(42, 1, std::vector<int>(line));
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(*first, line);
  // Another line, another layout, or a rank that disagrees with its line: a list of their own.
  EXPECT_NE(world.shared_line(42, 0, {0, 2, 4, 6}).get(), first.get());
  EXPECT_NE(world.shared_line(43, 1, line).get(), first.get());
  const auto wrong = world.shared_line(42, 1, {1, 3, 5});
  EXPECT_NE(wrong.get(), first.get());
  EXPECT_EQ(*wrong, (std::vector<int>{1, 3, 5}));
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
