// Going on after a lost rank, on sim: dist::abort ends this rank's pending calls with Aborted and
// its peers' with a RankFailure naming it; shrink_group makes a group of the survivors alone;
// RankFailure::failed_ranks names every lost rank; misuse is refused, naming what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using dist::sim::RunError;
using sim_test::world;
using ::testing::HasSubstr;

// Spins until `flag` is set by another rank's thread (concurrent runs only), at most 10 s.
void await(const std::atomic<bool>& flag) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  ASSERT_TRUE(flag.load()) << "the other rank never got there";
}

TEST(Abort, EndsThisRanksPendingCallAndItsPeersGetARankFailureNamingIt) {
  std::atomic<bool> aborted{false};
  std::vector<std::string> errors(3);
  std::vector<std::vector<int>> failed(3);
  dist::sim::run(world(3), [&] {
    const int rank = dist::get_rank();
    std::vector<float> v(4, 1.0f);
    if (rank == 1) {
      dist::Work pending =
          dist::all_reduce_async(std::span<float>(v));  // its peers are not there yet
      dist::abort();
      aborted = true;
      try {
        pending.wait();
        ADD_FAILURE() << "the pending all_reduce completed after dist::abort";
      } catch (const dist::Aborted& e) {
        errors[1] = e.what();
      }
      // Every later call on the aborted group is refused at once.
      EXPECT_THROW(dist::all_reduce(v), dist::Aborted);
      EXPECT_THROW(dist::barrier(), dist::Aborted);
      return;
    }
    await(aborted);
    for (int call = 0; call < 2; ++call) {  // the pending one, then one rank 1 never makes
      try {
        dist::all_reduce(v);
        ADD_FAILURE() << "rank " << rank << "'s all_reduce completed without rank 1";
      } catch (const dist::RankFailure& e) {
        errors[static_cast<std::size_t>(rank)] += e.what() + std::string("\n");
        failed[static_cast<std::size_t>(rank)] = e.failed_ranks();
      }
    }
  });
  EXPECT_THAT(errors[1], HasSubstr("all_reduce(op=sum, float32 x 4) on world #1"));
  EXPECT_THAT(errors[1], HasSubstr("was aborted on rank 1 by dist::abort"));
  for (const int r : {0, 2}) {
    EXPECT_THAT(errors[static_cast<std::size_t>(r)], HasSubstr("rank 1 aborted world"));
    EXPECT_EQ(failed[static_cast<std::size_t>(r)], std::vector<int>{1});
  }
}

TEST(Abort, TheWorldTakesEveryGroupWithItAndASubgroupOnlyItself) {
  dist::sim::run(world(4), [] {
    const int rank = dist::get_rank();
    const dist::Group pair = dist::new_group({0, 1});
    const dist::Group rest = dist::new_group({2, 3});
    std::vector<int> v{rank};
    if (rank == 2) {
      dist::abort(rest);  // rank 3 is not waiting in it: nothing of rank 3's is pending
      EXPECT_THROW(dist::all_reduce(v, dist::ReduceOp::sum, rest), dist::Aborted);
      dist::barrier();  // the world goes on
      return;
    }
    if (rank == 3) {
      dist::barrier();
      return;
    }
    dist::barrier();
    if (rank == 0) {
      const std::vector<dist::Group> both{pair};
      dist::abort(std::span<const dist::Group>(both));
      EXPECT_THROW(dist::all_reduce(v, dist::ReduceOp::sum, pair), dist::Aborted);
      dist::abort();  // the world, and with it every group of this rank
      EXPECT_THROW(dist::barrier(), dist::Aborted);
      dist::abort();  // twice: nothing more
    }
  });
}

// Rank 2 is lost at its first call; the survivors see it named, shrink the world without it and
// go on: their sum is the survivors' alone, in a group numbered by global rank.
TEST(ShrinkGroup, TheSurvivorsGoOnWithoutTheLostRank) {
  dist::sim::Cluster cluster = world(4);
  cluster.faults = {dist::sim::Fault::kill(2, 1)};
  std::vector<std::vector<int>> failed(4), members(4);
  std::vector<int> sums(4, -1), new_ranks(4, -1);
  try {
    dist::sim::run(cluster, [&] {
      const int rank = dist::get_rank();
      std::vector<int> v{rank + 1};
      try {
        dist::all_reduce(v);
      } catch (const dist::RankFailure& e) {
        if (rank == 2) throw;  // the killed rank itself
        failed[static_cast<std::size_t>(rank)] = e.failed_ranks();
      }
      const dist::Group survivors = dist::shrink_group({}, {2}, {.abort_parent = true});
      std::vector<int> w{rank + 1};
      dist::all_reduce(w, dist::ReduceOp::sum, survivors);
      sums[static_cast<std::size_t>(rank)] = w[0];
      members[static_cast<std::size_t>(rank)] = survivors.ranks();
      new_ranks[static_cast<std::size_t>(rank)] = dist::get_rank(survivors);
      EXPECT_THROW(dist::barrier(), dist::Aborted);  // the parent was aborted first
    });
    FAIL() << "the killed rank's run did not fail";
  } catch (const RunError& e) {
    EXPECT_TRUE(e.failed_with<dist::RankFailure>(2));
    for (const int r : {0, 1, 3}) EXPECT_TRUE(e.outcomes()[static_cast<std::size_t>(r)].ok());
  }
  for (const int r : {0, 1, 3}) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(failed[i], std::vector<int>{2}) << "rank " << r;
    EXPECT_EQ(sums[i], 1 + 2 + 4) << "rank " << r;
    EXPECT_EQ(members[i], (std::vector<int>{0, 1, 3})) << "rank " << r;
  }
  EXPECT_EQ(new_ranks, (std::vector<int>{0, 1, -1, 2}));
}

TEST(ShrinkGroup, RefusesAListThatExcludesTheCallerOrIsNotARankList) {
  dist::sim::run(world(3), [] {
    const int me = dist::get_rank();
    auto refused = [](std::vector<int> excluded, const char* why) {
      try {
        (void)dist::shrink_group({}, excluded);
        ADD_FAILURE() << "shrink_group accepted " << why;
      } catch (const dist::InvalidArgument& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    EXPECT_THAT(refused({me}, "the caller"), HasSubstr("excludes itself"));
    EXPECT_THAT(refused({3}, "rank 3 of 3"), HasSubstr("out of range"));
    EXPECT_THAT(refused({(me + 1) % 3, (me + 1) % 3}, "a rank twice"), HasSubstr("twice"));
    EXPECT_THROW(
        (void)dist::shrink_group({}, std::vector<int>{}, {.timeout = std::chrono::milliseconds(0)}),
        dist::InvalidArgument);
  });
}

}  // namespace
