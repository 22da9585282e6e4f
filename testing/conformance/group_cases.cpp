// Groups and barriers on every backend: collectives inside groups use group ranks, non-members
// are refused, groups interleave with the world, and no rank leaves a barrier early.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <tuple>

#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

using V = std::vector<std::int64_t>;
class Groups : public conformance::Test {};

TEST_F(Groups, TwoGroupsUseGroupRanksBesideTheWorld) {
  if (auto why = lacks_world(4)) GTEST_SKIP() << *why;
  const auto got = run_world(4, [] {
    const int me = dist::get_rank();
    const auto odd = dist::new_group({3, 1});
    const auto even = dist::new_group({0, 2});
    V sum{me}, bcast{me * 10};
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
  const std::vector<V> expected[] = {{{2}, {20}, {4}, {-1, -1, 0}},
                                     {{4}, {30}, {4}, {1, 2, -1}},
                                     {{2}, {20}, {4}, {-1, -1, 1}},
                                     {{4}, {30}, {4}, {0, 2, -1}}};
  for (const auto& [rank, v] : got) EXPECT_EQ(v, expected[rank]) << "rank " << rank;
}

// A 2×2 device mesh and new_subgroups of 2: each rank's groups along the dimensions reduce what
// the reference gives over their members (the ranks that differ in that coordinate only).
TEST_F(Groups, DeviceMeshAndSubgroupsReduceOverTheirRanks) {
  if (auto why = lacks_world(4)) GTEST_SKIP() << *why;
  const auto got = run_world(4, [] {
    const auto mesh = dist::init_device_mesh({2, 2}, {"dp", "tp"});
    const auto [pair, all] = dist::new_subgroups(2);
    std::vector<V> sums;
    for (const auto& g : {mesh.get_group("dp"), mesh.get_group("tp"), pair}) {
      V v = input<std::int64_t>(dist::get_rank(), 3);
      dist::all_reduce(v, dist::ReduceOp::sum, g);
      sums.push_back(v);
    }
    return sums;
  });
  const std::vector<int> members[4][3] = {{{0, 2}, {0, 1}, {0, 1}},
                                          {{1, 3}, {0, 1}, {0, 1}},
                                          {{0, 2}, {2, 3}, {2, 3}},
                                          {{1, 3}, {2, 3}, {2, 3}}};
  for (const auto& [rank, sums] : got)
    for (std::size_t g = 0; g < 3; ++g) {
      std::vector<V> inputs;
      for (const int r : members[rank][g]) inputs.push_back(input<std::int64_t>(r, 3));
      EXPECT_EQ(sums[g], ref::all_reduce(inputs, ref::Op::sum).at(0))
          << "rank " << rank << ", group " << g;
    }
}

// Every other rank from the last, in reverse order: group ranks follow the list's order.
TEST_F(Groups, ReversedEveryOtherRankRanksAndReduces) {
  for (int n : world_runner().world_sizes) {
    std::vector<int> members;
    for (int r = n - 1; r >= 0; r -= 2) members.push_back(r);
    const auto got = run_world(n, [&] {
      const dist::Group group = dist::new_group(members);
      V out;
      if (!group.is_member()) return out;
      V v{dist::get_rank()}, b{dist::get_rank()};
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      dist::broadcast(b, 0, group);  // src is a rank within the group
      return V{dist::get_rank(group), dist::get_world_size(group), v[0], b[0]};
    });
    std::int64_t sum = 0;
    for (int m : members) sum += m;
    for (const auto& [rank, v] : got) {
      const auto at = std::find(members.begin(), members.end(), rank);
      const V expected =
          at == members.end()
              ? V{}
              : V{at - members.begin(), static_cast<std::int64_t>(members.size()), sum, members[0]};
      EXPECT_EQ(v, expected) << "world " << n << ", rank " << rank;
    }
  }
}

// detectron2's object group: a gloo group (with its own timeout) beside the world, whatever the
// world's backend. On sim the backend is recorded; on gloo and mpi the members connect anew.
TEST_F(Groups, AGroupWithItsOwnBackendAndTimeoutReducesAndMovesObjects) {
  for (int n : world_runner().world_sizes) {
    if (n < 2) continue;
    const auto got = run_world(n, [n] {
      std::vector<int> firsts;  // every rank but the last
      for (int r = 0; r + 1 < n; ++r) firsts.push_back(r);
      const auto objects = dist::new_group(
          firsts, {.backend = dist::Backend::gloo, .timeout = std::chrono::seconds(20)});
      V sum{dist::get_rank() + 1};
      std::vector<std::string> names;
      if (objects.is_member()) {
        dist::all_reduce(sum, dist::ReduceOp::sum, objects);
        names = dist::all_gather_object(std::string("rank ") + std::to_string(dist::get_rank()),
                                        objects);
      }
      V world{1};
      dist::all_reduce(world);  // the world goes on beside it
      // Outside the group get_backend raises (as torch): only members ask.
      const bool gloo = !objects.is_member() || dist::get_backend(objects) == dist::Backend::gloo;
      return std::make_tuple(sum, names, world, gloo);
    });
    for (const auto& [rank, result] : got) {
      const auto& [sum, names, world, gloo] = result;
      EXPECT_TRUE(gloo) << "get_backend of the group";
      EXPECT_EQ(world, V{n});
      if (rank == n - 1) continue;
      EXPECT_EQ(sum, V{static_cast<std::int64_t>(n - 1) * n / 2}) << "rank " << rank;
      ASSERT_EQ(names.size(), static_cast<std::size_t>(n - 1)) << "rank " << rank;
      EXPECT_EQ(names.back(), "rank " + std::to_string(n - 2));
    }
  }
}

// Outside the group, as in torch: no call on it, get_rank and get_world_size are -1, and
// get_backend raises.
TEST_F(Groups, NonMembersCannotUseTheGroup) {
  const auto n = world_runner().world_of_at_least(3);
  if (!n) GTEST_SKIP() << *lacks_world(3);
  const auto got = run_world(*n, [] {
    const auto group = dist::new_group({0, 1});
    V v{1};
    if (!group.is_member()) {
      require(dist::get_rank(group) == -1 && dist::get_world_size(group) == -1,
              "a non-member's get_rank and get_world_size of the group are not -1");
      require(dist::get_dist_info(group) == std::pair{-1, -1}, "get_dist_info is not (-1, -1)");
      bool backend_refused = false;
      try {
        (void)dist::get_backend(group);
      } catch (const dist::InvalidArgument&) {
        backend_refused = true;
      }
      require(backend_refused, "get_backend answered for a group the caller is not in");
      try {
        dist::all_reduce(v, dist::ReduceOp::sum, group);
      } catch (const dist::InvalidArgument&) {
        return V{};
      }
      return V{-1};
    }
    dist::all_reduce(v, dist::ReduceOp::sum, group);
    return v;
  });
  for (const auto& [rank, v] : got) EXPECT_EQ(v, rank < 2 ? V{2} : V{}) << "rank " << rank;
}

// torch's use_local_synchronization: each pair of ranks makes its own group, twice, and only the
// pair's members call new_group for it; a rank may also ask for a group it is not in, and gets one
// it is not a member of, at once.
TEST_F(Groups, OnlyTheMembersMakeAGroupWithLocalSynchronization) {
  const auto n = world_runner().world_of_at_least(2);
  if (!n) GTEST_SKIP() << *lacks_world(2);
  const auto got = run_world(*n, [&] {
    const int rank = dist::get_rank();
    const int first = rank - rank % 2;
    std::vector<int> pair{first};
    if (first + 1 < *n) pair.push_back(first + 1);
    const dist::GroupOptions local{.use_local_synchronization = true};
    if (*n >= 4) {  // the next pair's group, asked for from outside it
      const auto elsewhere = dist::new_group({(first + 2) % *n, (first + 3) % *n}, local);
      require(!elsewhere.is_member() && dist::get_world_size(elsewhere) == -1,
              "a rank asking for a group it is not in became a member");
    }
    V sums;
    for (int round = 1; round <= 2; ++round) {
      const auto group = dist::new_group(pair, local);
      require(group.is_member(), "a member of its pair's group is not a member");
      V v{(rank + 1) * round};
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      sums.push_back(v[0]);
    }
    dist::barrier();
    return sums;
  });
  for (const auto& [rank, sums] : got) {
    const int first = rank - rank % 2;
    const std::int64_t pair_sum = first + 1 + (first + 1 < *n ? first + 2 : 0);
    EXPECT_EQ(sums, (V{pair_sum, 2 * pair_sum})) << world_runner().name << ", rank " << rank;
  }
}

TEST_F(Groups, OneRankWorldAndGroup) {
  if (auto why = lacks_world(1)) GTEST_SKIP() << *why;
  const auto got = run_world(1, [] {
    V v{5};
    dist::all_reduce(v);
    dist::barrier();
    const auto single = dist::new_group({0});
    dist::all_reduce(v, dist::ReduceOp::sum, single);
    return std::pair{v, dist::get_world_size()};
  });
  for (const auto& [rank, p] : got) {
    EXPECT_EQ(p.first, V{5});
    EXPECT_EQ(p.second, 1);
  }
}

// After a first barrier, rank r arrives 60 ms × r late at a second: nobody leaves it before the
// last has arrived, so rank r waits about 60 ms × (n - 1 - r) (20 ms of slack for the scheduler).
TEST_F(Groups, BarrierLetsNobodyLeaveBeforeEveryoneArrives) {
  using Clock = std::chrono::steady_clock;
  for (int n : world_runner().world_sizes) {
    if (n < 2) continue;
    const auto got = run_world(n, [] {
      dist::barrier();
      std::this_thread::sleep_for(std::chrono::milliseconds(60 * dist::get_rank()));
      const auto arrived = Clock::now();
      dist::barrier();
      const auto left = Clock::now();
      return std::chrono::duration_cast<std::chrono::milliseconds>(left - arrived).count();
    });
    for (const auto& [rank, waited] : got)
      EXPECT_GE(waited, 60 * (n - 1 - rank) - 20) << "world " << n << ", rank " << rank;
  }
}

TEST_F(Groups, SubgroupBarrierWaitsOnlyForMembers) {
  const auto n = world_runner().world_of_at_least(3);
  if (!n) GTEST_SKIP() << *lacks_world(3);
  const auto got = run_world(*n, [] {
    const auto group = dist::new_group({0, 1});
    if (group.is_member()) {
      dist::barrier(group);
      dist::barrier(group);
    }
    return 1;
  });
  for (const auto& [rank, done] : got) EXPECT_EQ(done, 1) << "rank " << rank;
}

}  // namespace
}  // namespace conformance
