// Receives from any_source on sim: in deterministic mode the sender taken among those ready comes
// from the seed (seeds explore different matches, a seed replays its own), and a receive no rank
// can ever satisfy is a DeadlockError, whether the others wait elsewhere or have returned.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using dist::sim::Cluster;
using dist::sim::Schedule;
using sim_test::world;
using ::testing::HasSubstr;

Cluster deterministic(int n, std::uint64_t seed) {
  Cluster c = world(n);
  c.schedule = Schedule::deterministic;
  c.seed = seed;
  return c;
}

// Ranks 1..n-1 each post a send to rank 0 and meet rank 0 in a barrier, so every send is waiting
// when rank 0 takes them with any_source; the order rank 0 got them in.
std::vector<int> order_taken(const Cluster& cluster) {
  std::vector<int> order;
  dist::sim::run(cluster, [&] {
    const int rank = dist::get_rank();
    if (rank != 0) {
      const std::vector<int> payload{rank};
      auto work = dist::isend(std::span<const int>(payload), 0);
      dist::barrier();
      work.wait();
      return;
    }
    dist::barrier();
    for (int i = 1; i < dist::get_world_size(); ++i) {
      std::vector<int> got(1);
      const int from = dist::recv(got, dist::any_source);
      EXPECT_EQ(got[0], from);
      order.push_back(from);
    }
  });
  return order;
}

TEST(AnySource, SeedsChooseAmongReadySendersAndASeedReplaysItsChoice) {
  std::set<std::vector<int>> orders;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const auto order = order_taken(deterministic(5, seed));
    EXPECT_EQ(std::set<int>(order.begin(), order.end()), (std::set<int>{1, 2, 3, 4}));
    EXPECT_EQ(order_taken(deterministic(5, seed)), order) << "seed " << seed;
    orders.insert(order);
  }
  EXPECT_GE(orders.size(), 3U) << "12 seeds explored only " << orders.size() << " orders";
}

TEST(AnySource, ConcurrentModeTakesTheOldestWaitingSend) {
  // Rank 2 posts its send before the first barrier, rank 1 between the two.
  std::vector<int> order;
  dist::sim::run(world(3), [&] {
    const int rank = dist::get_rank();
    const std::vector<int> payload{rank};
    dist::Work work;
    if (rank == 2) work = dist::isend(std::span<const int>(payload), 0);
    dist::barrier();
    if (rank == 1) work = dist::isend(std::span<const int>(payload), 0);
    dist::barrier();
    if (rank == 0) {
      std::vector<int> got(1);
      order.push_back(dist::recv(got, dist::any_source));
      order.push_back(dist::recv(got, dist::any_source));
    }
    work.wait();
  });
  EXPECT_EQ(order, (std::vector<int>{2, 1}));
}

TEST(AnySource, AReceiveNoRankCanSatisfyIsADeadlock) {
  for (const Cluster& cluster : {world(3), deterministic(3, 5)}) {
    // The others wait in a barrier rank 0 never joins.
    auto e = sim_test::failure_of(cluster, [] {
      std::vector<float> v(2);
      if (dist::get_rank() == 0) dist::recv(v, dist::any_source, 4);
      else dist::barrier();
    });
    EXPECT_EQ(e.code(), dist::ErrorCode::deadlock) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("recv(src=any_source, tag=4, float32 x 2) on world"));
    EXPECT_THAT(e.what(), HasSubstr("no rank of world sent to it"));
    // The others return: the receive fails as soon as the last of them has, naming them all.
    e = sim_test::failure_of(cluster, [] {
      std::vector<float> v(2);
      if (dist::get_rank() == 0) dist::recv(v, dist::any_source, 4);
    });
    EXPECT_EQ(e.code(), dist::ErrorCode::deadlock) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("can never complete"));
    EXPECT_THAT(e.what(), HasSubstr("ranks 1, 2 returned without calling it"));  // both, one line
  }
}

TEST(AnySource, ASendWithAnotherTagOrToAnotherRankDoesNotMatch) {
  const auto e = sim_test::failure_of(world(3), [] {
    std::vector<int> v(1, dist::get_rank());
    if (dist::get_rank() == 0) dist::recv(v, dist::any_source, 1);
    if (dist::get_rank() == 1) dist::send(v, 0, 2);  // wrong tag
    if (dist::get_rank() == 2) dist::send(v, 1, 1);  // wrong receiver
  });
  EXPECT_EQ(e.code(), dist::ErrorCode::deadlock) << e.what();
}

TEST(AnySource, WorkSourceIsKnownOnceAReceiveCompletes) {
  dist::sim::run(world(2), [] {
    std::vector<int> v(3, dist::get_rank());
    if (dist::get_rank() == 1) {
      auto work = dist::isend(std::span<const int>(v), 0);
      work.wait();
      EXPECT_EQ(work.source(), -1);  // not a receive
      dist::send(v, 0, 1);
      return;
    }
    auto from_any = dist::irecv(std::span<int>(v), dist::any_source);
    from_any.wait();
    EXPECT_EQ(from_any.source(), 1);
    auto from_one = dist::irecv(std::span<int>(v), 1, 1);
    from_one.wait();
    EXPECT_EQ(from_one.source(), 1);
    EXPECT_EQ(dist::Work().source(), -1);
  });
}

TEST(AnySource, ABatchMayReceiveFromAnySource) {
  dist::sim::run(deterministic(3, 2), [] {
    const int rank = dist::get_rank();
    std::vector<int> v(1, rank);
    if (rank == 0) {
      std::vector<int> a(1), b(1);
      auto works =
          dist::batch_isend_irecv({dist::P2POp::irecv(std::span<int>(a), dist::any_source),
                                   dist::P2POp::irecv(std::span<int>(b), dist::any_source)});
      for (auto& w : works) w.wait();
      EXPECT_EQ(std::set<int>({works[0].source(), works[1].source()}), (std::set<int>{1, 2}));
      EXPECT_EQ(a[0], works[0].source());
      EXPECT_EQ(b[0], works[1].source());
    } else {
      dist::send(v, 0);
    }
  });
}

TEST(AnySource, AGroupOfOneHasNoOneToReceiveFrom) {
  const auto e = sim_test::failure_of(world(1), [] {
    std::vector<int> v(1);
    dist::recv(v, dist::any_source);
  });
  EXPECT_EQ(e.code(), dist::ErrorCode::invalid_argument);
  EXPECT_THAT(e.what(),
              HasSubstr("recv: argument 'src' is any_source, but the group has no other"));
}

}  // namespace
