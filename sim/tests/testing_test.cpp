// dist/testing.hpp: the one-line GoogleTest runner (failures name the rank) and the rapidcheck
// generators, including the README's worked example of a rank-conditional collective bug.
#include "dist/sim/testing.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "dist/dist.hpp"

namespace {

// The README's example: the code under test skips the collective on a rank with an empty shard.
double global_accuracy(std::int64_t correct, std::int64_t total) {
  std::vector<std::int64_t> counts{correct, total};
  if (total > 0) dist::all_reduce(counts);  // BUG: a rank with no samples skips the collective
  return static_cast<double>(counts[0]) / static_cast<double>(counts[1]);
}

TEST(Testing, RunRanksRunsTheBodyOnEveryRank) {
  std::vector<int> seen(4, 0);
  EXPECT_TRUE(dist::testing::run_ranks(4, [&] {
    EXPECT_EQ(dist::get_world_size(), 4);
    ++seen[static_cast<std::size_t>(dist::get_rank())];
  }));
  EXPECT_EQ(seen, (std::vector<int>{1, 1, 1, 1}));
}

TEST(Testing, AnAssertionFailureNamesTheRank) {
  EXPECT_NONFATAL_FAILURE_ON_ALL_THREADS(
      dist::testing::run_ranks(4, [] { EXPECT_NE(dist::get_rank(), 2); }), "rank 2 of 4");
}

TEST(Testing, TheRankConditionalBugIsCaughtWithAMessageNamingTheCall) {
  EXPECT_TRUE(dist::testing::run_ranks(3, [] { EXPECT_EQ(global_accuracy(3, 4), 0.75); }));
  EXPECT_NONFATAL_FAILURE_ON_ALL_THREADS(
      dist::testing::run_ranks(3,
                               [] {
                                 const bool empty = dist::get_rank() == 2;
                                 global_accuracy(empty ? 0 : 3, empty ? 0 : 4);
                               }),
      "all_reduce(op=sum, int64 x 2) on world #1 can never complete:\n"
      "      rank 2 returned without calling it");
}

TEST(Testing, ClusterGeneratorFeedsProperties) {
  int cases = 0;
  EXPECT_TRUE(rc::check("all_reduce of ranks sums to n(n-1)/2", [&](dist::sim::Cluster cluster) {
    ++cases;
    RC_ASSERT(cluster.schedule == dist::sim::Schedule::deterministic);
    const int n = cluster.world_size();
    const auto sums = dist::sim::run(cluster, [] {
      std::vector<int> v{dist::get_rank()};
      dist::all_reduce(v);
      return v[0];
    });
    RC_ASSERT(sums == std::vector<int>(static_cast<std::size_t>(n), n * (n - 1) / 2));
  }));
  EXPECT_GT(cases, 0);
}

}  // namespace
