// Groups made by new_group on sim: collectives over subsets with group-local src/dst against the
// reference, membership answers, non-members rejected, invalid rank lists rejected, and a group
// that outlives its handles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/tests/sim_test_util.hpp"

namespace {

using namespace sim_test;
using ::testing::HasSubstr;

struct Membership {
  bool member = false;
  int rank = -2, size = -2;
  std::vector<int> ranks;
};

Membership membership(const dist::Group& g) {
  return {g.is_member(), dist::get_rank(g), dist::get_world_size(g), g.ranks()};
}

// Every collective over group g = {1, 3} and h = {2, 0} (of 4 ranks), with group-local roots.
struct SubgroupRun {
  Membership g, h;
  std::vector<std::vector<float>> on_g, on_h;
  std::vector<std::int32_t> mean_on_g;
};

SubgroupRun subgroup_run() {
  const int rank = dist::get_rank();
  const dist::Group g = dist::new_group({1, 3});
  const dist::Group h = dist::new_group({2, 0});
  SubgroupRun out{membership(g), membership(h), {}, {}, {}};
  const auto mine = input<float>(rank, 7);
  const auto wide = input<float>(rank, 14, 5);
  if (g.is_member()) {
    auto ar = mine, bc = mine;
    dist::all_reduce(ar, dist::ReduceOp::sum, g);
    dist::broadcast(bc, 1, g);
    std::vector<float> p2p(7);
    if (dist::get_rank(g) == 0) dist::send(mine, 1, 3, g);
    else dist::recv(p2p, 0, 3, g);
    dist::barrier(g);
    out.on_g = {ar, bc, concat(dist::gather(mine, 1, g)), dist::all_to_all(wide, g), p2p};
    out.mean_on_g = {rank * 3 - 4};
    dist::all_reduce(out.mean_on_g, "mean", g);
  }
  if (h.is_member()) {
    auto rd = mine;
    dist::reduce(rd, 1, dist::ReduceOp::max, h);
    std::vector<float> sc(7);
    dist::scatter(std::span<float>(sc), std::span<const float>(wide), 0, h);
    out.on_h = {concat(dist::all_gather(mine, h)), rd, sc, dist::reduce_scatter(wide, "sum", h)};
  }
  dist::barrier();
  return out;
}

template <class T>
std::vector<std::vector<T>> of_ranks(std::initializer_list<int> ranks, std::size_t n,
                                     std::uint64_t salt) {
  std::vector<std::vector<T>> out;
  for (int r : ranks) out.push_back(input<T>(r, n, salt));
  return out;
}

TEST(Groups, CollectivesOnSubsetsMatchReference) {
  const auto got = dist::sim::run(world(4), subgroup_run);
  // Membership: g = {1, 3}, h = {2, 0} in the order given.
  const int g_rank[] = {-1, 0, -1, 1};
  const int h_rank[] = {1, -1, 0, -1};
  for (std::size_t r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(got[r].g.member, g_rank[r] >= 0);
    EXPECT_EQ(got[r].g.rank, g_rank[r]);
    EXPECT_EQ(got[r].g.ranks, (std::vector<int>{1, 3}));
    EXPECT_EQ(got[r].h.member, h_rank[r] >= 0);
    EXPECT_EQ(got[r].h.rank, h_rank[r]);
    EXPECT_EQ(got[r].h.ranks, (std::vector<int>{2, 0}));
    EXPECT_EQ(got[r].g.size, g_rank[r] >= 0 ? 2 : -1);  // torch's -1 outside the group
    EXPECT_EQ(got[r].h.size, h_rank[r] >= 0 ? 2 : -1);
  }
  const auto g_in = of_ranks<float>({1, 3}, 7, 0);
  const auto g_wide = of_ranks<float>({1, 3}, 14, 5);
  const auto h_in = of_ranks<float>({2, 0}, 7, 0);
  const auto h_wide = of_ranks<float>({2, 0}, 14, 5);
  const auto ar = ref::all_reduce(g_in, ref::Op::sum);
  const auto bc = ref::broadcast(g_in, 1);
  const auto ga = ref::gather(g_in, 1);
  const auto aa = ref::all_to_all(g_wide);
  const auto pp = ref::p2p<float>({{0, 1, 3, g_in[0]}}, {{1, 0, 3}}, 2);
  const auto mean = ref::all_reduce<std::int32_t>({{1 * 3 - 4}, {3 * 3 - 4}}, ref::Op::mean);
  const auto ag = ref::all_gather(h_in);
  const auto rd = ref::reduce(h_in, ref::Op::max, 1);
  const auto sc = ref::scatter(h_wide[0], 2, 0);
  const auto rs = ref::reduce_scatter(h_wide, ref::Op::sum);
  for (std::size_t r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    if (g_rank[r] < 0) {
      EXPECT_TRUE(got[r].on_g.empty());
    } else {
      const auto i = static_cast<std::size_t>(g_rank[r]);
      const std::vector<float> p2p = i == 1 ? pp[0] : std::vector<float>(7, 0.f);
      EXPECT_TRUE(bits_equal(got[r].on_g,
                             std::vector<std::vector<float>>{ar[i], bc[i], ga[i], aa[i], p2p}));
      EXPECT_EQ(got[r].mean_on_g, mean[i]);
    }
    if (h_rank[r] >= 0) {
      const auto i = static_cast<std::size_t>(h_rank[r]);
      EXPECT_TRUE(bits_equal(got[r].on_h,
                             std::vector<std::vector<float>>{ag[i], rd[i], sc[i], rs[i]}));
    }
  }
}

// Every call a non-member of g might make, each expected to raise InvalidArgument.
std::vector<std::pair<const char*, std::function<void()>>> calls_on(const dist::Group& g) {
  return {
      {"all_reduce", [&] { std::vector<float> v(3); dist::all_reduce(v, "sum", g); }},
      {"broadcast", [&] { std::vector<float> v(3); dist::broadcast(v, 0, g); }},
      {"reduce", [&] { std::vector<float> v(3); dist::reduce(v, 0, "sum", g); }},
      {"all_gather", [&] { dist::all_gather(std::vector<float>(3), g); }},
      {"gather", [&] { dist::gather(std::vector<float>(3), 0, g); }},
      {"scatter", [&] { std::vector<float> v(3); dist::scatter(v, {}, 0, g); }},
      {"reduce_scatter", [&] { dist::reduce_scatter(std::vector<float>(4), "sum", g); }},
      {"all_to_all", [&] { dist::all_to_all(std::vector<float>(4), g); }},
      {"all_reduce(Tensor)",
       [&] { dist::Tensor t = dist::Tensor::zeros({2}, dist::DType::int32); dist::all_reduce(t, "sum", g); }},
      {"barrier", [&] { dist::barrier(g); }},
      {"send", [&] { dist::send(std::vector<float>(3), 0, 0, g); }},
      {"recv", [&] { std::vector<float> v(3); dist::recv(v, 0, 0, g); }},
  };
}

TEST(Groups, NonMemberCallsRaiseInvalidArgumentNamingMembership) {
  const auto got = dist::sim::run(world(4), [] {
    const dist::Group g = dist::new_group({1, 3});
    std::vector<std::string> outcomes;
    if (!g.is_member()) {
      for (const auto& [name, call] : calls_on(g)) {
        try {
          call();
          outcomes.push_back(std::string(name) + ": no error");
        } catch (const dist::InvalidArgument& e) {
          outcomes.push_back(std::string(name) + ": " + e.what());
        }
      }
    } else {
      std::vector<float> v{1.f};
      dist::all_reduce(v, "sum", g);  // the members still communicate normally
      outcomes.push_back(v.front() == 2.f ? "ok" : "wrong sum");
    }
    return outcomes;
  });
  for (std::size_t r : {0u, 2u}) {
    ASSERT_EQ(got[r].size(), 12u);
    for (const auto& o : got[r]) EXPECT_THAT(o, HasSubstr("not a member")) << "rank " << r;
  }
  for (std::size_t r : {1u, 3u}) EXPECT_EQ(got[r], (std::vector<std::string>{"ok"}));
}

TEST(Groups, InvalidRankListsRaiseInvalidArgument) {
  const auto got = dist::sim::run(world(4), [] {
    std::vector<std::string> messages;
    for (const auto& ranks : std::vector<std::vector<int>>{{1, 1}, {0, 4}, {-1, 0}, {}}) {
      try {
        dist::new_group(ranks);
        messages.push_back("no error");
      } catch (const dist::InvalidArgument& e) {
        messages.push_back(e.what());
      }
    }
    // A valid group afterwards still works: nothing was left half-created.
    const dist::Group g = dist::new_group({3, 2, 1, 0});
    std::vector<std::int32_t> v{dist::get_rank(g)};
    dist::all_gather(v, g);
    dist::broadcast(v, 0, g);
    messages.push_back(std::to_string(v.front()));
    return messages;
  });
  for (std::size_t r = 0; r < got.size(); ++r) {
    ASSERT_EQ(got[r].size(), 5u);
    for (std::size_t i = 0; i < 4; ++i)
      EXPECT_THAT(got[r][i], HasSubstr("'ranks'")) << "rank " << r << ", list " << i;
    EXPECT_THAT(got[r][0], HasSubstr("twice"));
    EXPECT_THAT(got[r][1], HasSubstr("out of range"));
    EXPECT_THAT(got[r][3], HasSubstr("empty"));
    EXPECT_EQ(got[r][4], "0") << "rank " << r;  // group rank 0 of {3, 2, 1, 0} has rank 0 in g
  }
}

// A group lives until destroy_dist (or the run's end), not until its last Group handle goes:
// torch keeps a group until destroy_process_group, and a rank that drops its handle must not
// close what a peer still uses in a call on it.
TEST(Groups, AGroupOutlivesItsLastHandle) {
  const auto alive = dist::sim::run(world(2), [] {
    std::weak_ptr<dist::detail::GroupState> state;
    {
      const dist::Group g = dist::new_group({0, 1});
      state = g.state();
    }
    return !state.expired();
  });
  for (std::size_t r = 0; r < alive.size(); ++r)
    EXPECT_TRUE(alive[r]) << "rank " << r << ": the group went with its handle";
}

}  // namespace
