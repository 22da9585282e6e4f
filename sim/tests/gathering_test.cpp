// The lock-free posting of collectives (matcher.cpp): a communicator's gathering ops, and the races
// between ranks arriving through the gate, ranks finishing, failing and blocking, repeated so
// that the interleavings the OS picks vary; and how a communicator finds a member's group rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/communicator.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using dist::sim::RunError;

using sim_test::world;

// The code of the RunError `fn` raises on `cluster`, or nullopt when the run succeeds.
template <class F> std::optional<dist::ErrorCode> failure_code(const dist::sim::Cluster& cluster, F fn) {
  try {
    dist::sim::run(cluster, fn);
  } catch (const RunError& e) {
    return e.code();
  }
  return std::nullopt;
}

TEST(Gathering, HoldsConsecutiveOpsWithTheLowestFirst) {
  dist::sim::Gathering g;
  EXPECT_TRUE(g.empty());
  EXPECT_EQ(g.find(1), nullptr);
  std::vector<std::shared_ptr<dist::sim::Op>> ops;
  for (int i = 0; i < 3; ++i) ops.push_back(std::make_shared<dist::sim::Op>());
  g.add(5, ops[0]);
  g.add(6, ops[1]);
  g.add(7, ops[2]);
  EXPECT_FALSE(g.empty());
  EXPECT_EQ(g.find(4), nullptr);
  EXPECT_EQ(g.find(8), nullptr);
  for (std::uint64_t seq = 5; seq <= 7; ++seq) {
    ASSERT_NE(g.find(seq), nullptr) << seq;
    EXPECT_EQ(g.find(seq)->get(), ops[seq - 5].get()) << seq;
  }
  std::vector<const dist::sim::Op*> order;
  g.for_each([&](const std::shared_ptr<dist::sim::Op>& op) { order.push_back(op.get()); });
  EXPECT_EQ(order, (std::vector<const dist::sim::Op*>{ops[0].get(), ops[1].get(), ops[2].get()}));
  // Removing the lowest promotes the next; the others keep their numbers.
  EXPECT_EQ(g.remove(5).get(), ops[0].get());
  EXPECT_EQ(g.find(5), nullptr);
  EXPECT_EQ(g.find(6)->get(), ops[1].get());
  EXPECT_EQ(g.find(7)->get(), ops[2].get());
  g.add(8, ops[0]);
  EXPECT_EQ(g.find(8)->get(), ops[0].get());
  EXPECT_EQ(g.remove(6).get(), ops[1].get());
  EXPECT_EQ(g.remove(7).get(), ops[2].get());
  EXPECT_EQ(g.remove(8).get(), ops[0].get());
  EXPECT_TRUE(g.empty());
  g.add(9, ops[1]);  // empty again: the next number starts a new run
  EXPECT_EQ(g.find(9)->get(), ops[1].get());
  g.clear();
  EXPECT_TRUE(g.empty());
}

TEST(LockFreePosting, RacingDifferentCollectivesAreADesyncEveryTime) {
  for (int run = 0; run < 200; ++run) {
    const auto code = failure_code(world(2), [] {
      std::vector<float> v(2, 1.0f);
      if (dist::get_rank() == 0)
        dist::all_reduce(v);
      else
        dist::broadcast(v, 0);
    });
    ASSERT_EQ(code, dist::ErrorCode::desync) << "run " << run;
  }
}

TEST(LockFreePosting, ARankReturningAsItsPeerArrivesIsAlwaysCaught) {
  // Rank 1 finishes while rank 0 posts: either the arrival sees it finished or its finish sees
  // the arrival; never neither (a hang until the timeout).
  auto cluster = world(2);
  cluster.timeout = std::chrono::seconds(20);
  const auto start = Clock::now();
  for (int run = 0; run < 200; ++run) {
    const auto code = failure_code(cluster, [] {
      if (dist::get_rank() == 0) dist::barrier();
    });
    ASSERT_EQ(code, dist::ErrorCode::deadlock) << "run " << run;
  }
  EXPECT_LT(Clock::now() - start, cluster.timeout) << "a run waited for its deadline";
}

TEST(LockFreePosting, AThrowingRankFailsItsPeersWhereverItStops) {
  for (int run = 0; run < 60; ++run) {
    const int n = 2 + run % 3;
    const int thrower = run % n;
    const int calls_before = run % 7;
    const auto code = failure_code(world(n), [&] {
      std::vector<int> v(3, 1);
      for (int i = 0; i < 12; ++i) {
        if (dist::get_rank() == thrower && i == calls_before) throw std::runtime_error("boom");
        if (i % 2) dist::all_reduce(v); else dist::barrier();
      }
    });
    ASSERT_EQ(code, dist::ErrorCode::rank_failure) << "run " << run;
  }
}

TEST(LockFreePosting, BlockedRanksAreWokenWithoutWaitingForTheirDeadline) {
  // 32 ranks on a few cores block at once in every wait: a completion that missed a blocked
  // rank's flag would leave it asleep until its deadline.
  constexpr int n = 32;
  auto cluster = world(n);
  cluster.timeout = std::chrono::seconds(30);
  const auto start = Clock::now();
  const auto sums = dist::sim::run(cluster, [] {
    std::vector<long> v(1, dist::get_rank());
    long total = 0;
    for (int i = 0; i < 300; ++i) {
      dist::barrier();
      v[0] = dist::get_rank() + i;
      dist::all_reduce(v);
      total += v[0];
    }
    return total;
  });
  EXPECT_LT(Clock::now() - start, cluster.timeout) << "a wait ran to its deadline: a lost wake-up";
  long expected = 0;
  for (int i = 0; i < 300; ++i) expected += n * (n - 1) / 2 + n * i;  // sum of (rank + i)
  for (long s : sums) EXPECT_EQ(s, expected);
}

}  // namespace

namespace {

// A communicator finds a member's group rank by binary search when its members ascend (most
// groups: new_group's sorted lists, a mesh's), by a scan otherwise; -1 for a non-member.
TEST(Communicator, FindsAGroupRankWhetherItsMembersAscendOrNot) {
  dist::sim::Communicator ascending;
  ascending.members = {2, 5, 9, 40};
  ascending.sorted = true;
  dist::sim::Communicator given_order;
  given_order.members = {9, 2, 40, 5};
  for (const auto* comm : {&ascending, &given_order}) {
    for (std::size_t i = 0; i < comm->members.size(); ++i)
      EXPECT_EQ(comm->group_rank_of(comm->members[i]), static_cast<int>(i));
    for (const int outsider : {0, 3, 41}) EXPECT_EQ(comm->group_rank_of(outsider), -1) << outsider;
  }
}

// new_group over a large world in an order of its own: each member's rank in the new group is
// its position in the list given (the scan), and in a sorted list its index (the search).
TEST(Communicator, NewGroupsRanksFollowTheListGivenSortedOrNot) {
  dist::sim::Cluster cluster{
      .nodes = 16, .ranks_per_node = 8, .schedule = dist::sim::Schedule::deterministic};
  dist::sim::run(cluster, [] {
    const int n = dist::get_world_size(), me = dist::get_rank();
    std::vector<int> reversed(static_cast<std::size_t>(n)), evens;
    for (int r = 0; r < n; ++r) reversed[static_cast<std::size_t>(r)] = n - 1 - r;
    for (int r = 0; r < n; r += 2) evens.push_back(r);
    const dist::Group back = dist::new_group(reversed);
    const dist::Group even = dist::new_group(evens);
    EXPECT_EQ(dist::get_rank(back), n - 1 - me);
    if (me % 2 == 0) EXPECT_EQ(dist::get_rank(even), me / 2);
    else EXPECT_EQ(dist::get_rank(even), -1);
  });
}

// A new_group's list is kept once (the ranks that agree with the first arrival share its copy),
// and a mismatch still shows every arrived rank's list.
TEST(Communicator, ANewGroupsSharedListStillDescribesEveryRanksCall) {
  dist::sim::Cluster cluster{
      .nodes = 1, .ranks_per_node = 4, .schedule = dist::sim::Schedule::deterministic};
  try {
    dist::sim::run(cluster, [] {
      const int me = dist::get_rank();
      dist::new_group(me == 3 ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1, 2, 3});
    });
    ADD_FAILURE() << "the differing list was not caught";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, ::testing::HasSubstr("'ranks'"));
    EXPECT_THAT(what, ::testing::HasSubstr("ranks={0,1,2,3}"));
    EXPECT_THAT(what, ::testing::HasSubstr("ranks={0,1,2}"));
  }
  // Agreeing lists make the group on every rank.
  dist::sim::run(cluster, [] {
    const dist::Group g = dist::new_group({3, 1, 2});
    const int me = dist::get_rank();
    EXPECT_EQ(dist::get_rank(g), me == 3 ? 0 : me == 1 ? 1 : me == 2 ? 2 : -1);
    if (me != 0) dist::barrier(g);
  });
}

}  // namespace
