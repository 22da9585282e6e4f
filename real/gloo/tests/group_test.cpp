// Groups and barriers on gloo: new_group (members, group ranks, non-members), several groups
// used interleaved with the world, a one-rank world, and barrier's guarantee that no rank leaves
// before every rank has arrived.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "real/gloo/tests/gloo_test_util.hpp"

namespace {

using namespace gloo_test;
using V = std::vector<std::int64_t>;

TEST(GlooGroups, NewGroupCollectivesUseGroupRanks) {
  const auto got = run(4, [] {
    const int me = dist::get_rank();
    const auto odd = dist::new_group({3, 1});
    const auto even = dist::new_group({0, 2});
    V sum{me};
    V bcast{me * 10};
    if (odd.is_member()) {
      dist::all_reduce(sum, dist::ReduceOp::sum, odd);
      dist::broadcast(bcast, 0, odd);  // group rank 0 is world rank 3
    } else {
      dist::all_reduce(sum, dist::ReduceOp::max, even);
      dist::broadcast(bcast, 1, even);  // world rank 2
    }
    V world{1};
    dist::all_reduce(world);
    const V info{dist::get_rank(odd), dist::get_world_size(odd), dist::get_rank(even)};
    return std::vector<V>{sum, bcast, world, info};
  });
  EXPECT_EQ(got[0], (std::vector<V>{{2}, {20}, {4}, {-1, 2, 0}}));
  EXPECT_EQ(got[1], (std::vector<V>{{4}, {30}, {4}, {1, 2, -1}}));
  EXPECT_EQ(got[2], (std::vector<V>{{2}, {20}, {4}, {-1, 2, 1}}));
  EXPECT_EQ(got[3], (std::vector<V>{{4}, {30}, {4}, {0, 2, -1}}));
}

TEST(GlooGroups, NonMembersCannotUseTheGroup) {
  const auto got = run(3, [] {
    const auto group = dist::new_group({0, 1});
    V v{1};
    if (!group.is_member()) {
      EXPECT_THROW(dist::all_reduce(v, dist::ReduceOp::sum, group), dist::InvalidArgument);
      return V{};
    }
    dist::all_reduce(v, dist::ReduceOp::sum, group);
    return v;
  });
  EXPECT_EQ(got, (std::vector<V>{{2}, {2}, {}}));
}

TEST(GlooGroups, OneRankWorld) {
  const auto got = run(1, [] {
    V v{5};
    dist::all_reduce(v);
    dist::barrier();
    const auto single = dist::new_group({0});
    dist::all_reduce(v, dist::ReduceOp::sum, single);
    return std::pair{v, dist::get_world_size()};
  });
  EXPECT_EQ(got[0].first, V{5});
  EXPECT_EQ(got[0].second, 1);
}

TEST(GlooBarrier, NobodyLeavesBeforeEveryoneArrives) {
  using Clock = std::chrono::steady_clock;
  for (const int n : {2, 3, 4}) {
    std::vector<Clock::time_point> arrived(static_cast<std::size_t>(n)), left(static_cast<std::size_t>(n));
    run(n, [&] {
      const auto me = static_cast<std::size_t>(dist::get_rank());
      std::this_thread::sleep_for(std::chrono::milliseconds(60 * dist::get_rank()));
      arrived[me] = Clock::now();
      dist::barrier();
      left[me] = Clock::now();
      return 0;
    });
    const auto last_arrival = *std::max_element(arrived.begin(), arrived.end());
    for (int r = 0; r < n; ++r) EXPECT_GE(left[static_cast<std::size_t>(r)], last_arrival) << "rank " << r;
  }
}

TEST(GlooBarrier, SubgroupBarrierWaitsOnlyForMembers) {
  std::atomic<bool> outsider_done{false};
  run(3, [&] {
    const auto group = dist::new_group({0, 1});
    if (dist::get_rank() == 2) {
      outsider_done = true;
      return 0;
    }
    dist::barrier(group);
    dist::barrier(group);
    return 0;
  });
  EXPECT_TRUE(outsider_done);
}

}  // namespace
