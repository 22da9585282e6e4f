// dist::comm (detectron2's comm.py): synchronize, object all_gather/gather with the object group
// or a group argument, shared_random_seed, reduce_dict, and the local process group and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/tests/helpers_util.hpp"
#include "dist/dist.hpp"
#include "dist/sim/run.hpp"

namespace {

using helpers_test::expect_failure;
using helpers_test::message_of;
using helpers_test::world;
using ::testing::HasSubstr;

TEST(CommNotDistributed, AnswersLikeDetectron2) {
  EXPECT_NO_THROW(dist::comm::synchronize());
  EXPECT_EQ(dist::comm::all_gather(std::string("x")), std::vector<std::string>{"x"});
  EXPECT_EQ(dist::comm::gather(5, 0), std::vector<int>{5});
  EXPECT_GE(dist::comm::shared_random_seed(), 0);
  const std::map<std::string, float> d{{"loss", 2.0f}};
  EXPECT_EQ(dist::comm::reduce_dict(d), d);
  EXPECT_EQ(dist::comm::get_local_rank(), 0);
  EXPECT_EQ(dist::comm::get_local_size(), 1);
  EXPECT_THROW(dist::comm::get_local_process_group(), dist::NotInitialized);
  EXPECT_THROW(dist::comm::create_local_process_group(1), dist::NotInitialized);
  EXPECT_THROW(dist::comm::create_local_process_group(0), dist::InvalidArgument);
  EXPECT_NO_THROW(dist::comm::set_object_group(std::nullopt));
}

TEST(CommGather, AllGatherAndGatherInEveryWorld) {
  for (int n : {1, 2, 3}) {
    const auto results = dist::sim::run(world(n), [n] {
      dist::comm::synchronize();
      const int r = dist::get_rank();
      return std::make_pair(dist::comm::all_gather("r" + std::to_string(r)),
                            dist::comm::gather(r * 10, n - 1));
    });
    std::vector<std::string> all;
    std::vector<int> tens;
    for (int r = 0; r < n; ++r) {
      all.push_back("r" + std::to_string(r));
      tens.push_back(r * 10);
    }
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(results[static_cast<std::size_t>(r)].first, all);
      // dst gets the list; the other ranks an EMPTY list (not nullopt).
      EXPECT_EQ(results[static_cast<std::size_t>(r)].second,
                r == n - 1 ? tens : std::vector<int>{});
    }
  }
}

TEST(CommGather, GroupArgumentAndObjectGroupAreHonoured) {
  const auto results = dist::sim::run(world(3), [] {
    const int r = dist::get_rank();
    const auto reversed = dist::new_group({2, 1, 0});
    const auto pair = dist::new_group({0, 2});
    const auto explicit_group = dist::comm::all_gather(r, reversed);
    std::vector<int> in_pair;
    if (pair.is_member()) in_pair = dist::comm::all_gather(r, pair);
    const auto gathered = dist::comm::gather(r, 0, reversed);  // dst = group rank 0 = global 2
    dist::comm::set_object_group(reversed);
    const auto by_default = dist::comm::all_gather(r);
    const bool installed = !dist::comm::object_group().is_default();
    dist::comm::set_object_group(std::nullopt);
    const auto world_again = dist::comm::all_gather(r);
    return std::make_tuple(explicit_group, in_pair, gathered, by_default, installed, world_again);
  });
  for (int r = 0; r < 3; ++r) {
    const auto& [explicit_group, in_pair, gathered, by_default, installed, world_again] =
        results[static_cast<std::size_t>(r)];
    EXPECT_EQ(explicit_group, (std::vector<int>{2, 1, 0}));
    EXPECT_EQ(in_pair, r == 1 ? std::vector<int>{} : (std::vector<int>{0, 2}));
    EXPECT_EQ(gathered, r == 2 ? (std::vector<int>{2, 1, 0}) : std::vector<int>{});
    EXPECT_EQ(by_default, (std::vector<int>{2, 1, 0}));
    EXPECT_TRUE(installed);
    EXPECT_EQ(world_again, (std::vector<int>{0, 1, 2}));
  }
  const auto e = expect_failure(world(3), [] {
    dist::comm::set_object_group(dist::new_group({0, 1, 2}));  // fine: every rank
    const auto pair = dist::new_group({0, 1});
    if (pair.is_member()) dist::comm::set_object_group(pair);
  });
  EXPECT_TRUE(e.outcomes()[2].ok());
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(r)) << message_of(e, r);
    EXPECT_THAT(message_of(e, r), HasSubstr("must hold every rank of the world (3), it holds 2"));
  }
}

TEST(CommSeed, SharedRandomSeedIsRankZerosDrawOnTheObjectGroup) {
  const dist::sim::Cluster cluster{.nodes = 1, .ranks_per_node = 3, .seed = 5};
  const auto fresh = dist::sim::run(cluster, [] {
    auto& rng = dist::sim::rank_rng();
    const auto first = rng();
    return std::make_pair(static_cast<int>(first >> 33), rng());
  });
  const auto shared = dist::sim::run(cluster, [] {
    const int seed = dist::comm::shared_random_seed();
    const auto next = dist::sim::rank_rng()();
    dist::comm::set_object_group(dist::new_group({2, 0, 1}));
    return std::make_tuple(seed, next, dist::comm::shared_random_seed());
  });
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(std::get<0>(shared[r]), fresh[0].first);
    EXPECT_EQ(std::get<1>(shared[r]), fresh[r].second) << "every rank draws once";
    EXPECT_EQ(std::get<2>(shared[r]), std::get<2>(shared[0]));
  }
  EXPECT_EQ(dist::sim::run(cluster, [] { return dist::comm::shared_random_seed(); })[1],
            fresh[0].first);
}

TEST(CommReduceDict, SumsToRankZeroAndAveragesThere) {
  EXPECT_EQ(dist::sim::run(world(1),
                           [] {
                             return dist::comm::reduce_dict(std::map<std::string, int>{{"a", 3}});
                           })[0],
            (std::map<std::string, int>{{"a", 3}}));
  const auto results = dist::sim::run(world(3), [] {
    const int r = dist::get_rank();
    const std::map<std::string, double> losses{{"loss_b", 1.0 * r}, {"loss_a", 3.0 + r}};
    const std::map<std::string, std::vector<std::int32_t>> counts{{"n", {r, 2 * r + 1}}};
    std::map<std::string, dist::Tensor> tensors{
        {"t", dist::Tensor::from(std::vector<float>{static_cast<float>(r)})}};
    const auto t = dist::comm::reduce_dict(tensors, false).at("t").values<float>()[0];
    return std::make_tuple(dist::comm::reduce_dict(losses), dist::comm::reduce_dict(losses, false),
                           dist::comm::reduce_dict(counts), t);
  });
  const auto& [mean0, sum0, counts0, t0] = results[0];
  EXPECT_EQ(mean0, (std::map<std::string, double>{{"loss_a", 4.0}, {"loss_b", 1.0}}));
  EXPECT_EQ(sum0, (std::map<std::string, double>{{"loss_a", 12.0}, {"loss_b", 3.0}}));
  EXPECT_EQ(counts0.at("n"), (std::vector<std::int32_t>{1, 3}));  // (0+1+2)/3, (1+3+5)/3
  EXPECT_EQ(t0, 3.0f);
  // Other ranks' values are not meaningful: with dist they are the rank's own inputs.
  EXPECT_EQ(std::get<0>(results[2]),
            (std::map<std::string, double>{{"loss_a", 5.0}, {"loss_b", 2.0}}));
  const auto e = expect_failure(world(2), [] {
    dist::comm::reduce_dict(std::map<std::string, float>{{dist::get_rank() ? "x" : "y", 1.0f}});
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(e.failed_with<dist::DesyncError>(r)) << message_of(e, r);
    EXPECT_THAT(message_of(e, r), HasSubstr("reduce_dict: the ranks hold different dicts"));
  }
}

TEST(CommLocalGroup, CreatedPerMachineAndInstalled) {
  const auto results = dist::sim::run({.nodes = 1, .ranks_per_node = 6}, [] {
    const auto node_group = dist::comm::get_local_process_group();  // the launcher's layout
    const auto local = dist::comm::create_local_process_group(2);
    const auto again = dist::comm::create_local_process_group(2);
    std::vector<int> sum{dist::get_rank()};
    dist::all_reduce(sum, dist::ReduceOp::sum, local);
    dist::new_group({0, 1, 2, 3, 4, 5});  // every rank made the same new_group calls
    return std::make_tuple(node_group.ranks().size(), local.ranks(), again.state() == local.state(),
                           dist::comm::get_local_process_group().state() == local.state(),
                           dist::get_local_group()->ranks(), dist::get_local_rank(),
                           dist::get_local_size(), sum[0]);
  });
  for (int r = 0; r < 6; ++r) {
    const auto& [node_size, ranks, same, installed, local_ranks, local_rank, local_size, sum] =
        results[static_cast<std::size_t>(r)];
    const int m = r / 2;
    EXPECT_EQ(node_size, 6u);
    EXPECT_EQ(ranks, (std::vector<int>{2 * m, 2 * m + 1}));
    EXPECT_TRUE(same);
    EXPECT_TRUE(installed);
    EXPECT_EQ(local_ranks, ranks);
    EXPECT_EQ(local_rank, r % 2);
    EXPECT_EQ(local_size, 2);
    EXPECT_EQ(sum, 4 * m + 1);
  }
}

TEST(CommLocalGroup, Errors) {
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"world size 6 is not divisible by workers_per_machine = 4",
       [] { dist::comm::create_local_process_group(4); }},
      {"already created with workers_per_machine = 3, not 2",
       [] {
         dist::comm::create_local_process_group(3);
         dist::comm::create_local_process_group(2);
       }},
      {"'workers_per_machine' = -1 must be positive",
       [] { dist::comm::create_local_process_group(-1); }},
  };
  for (const auto& [text, body] : cases) {
    const auto e = expect_failure({.nodes = 2, .ranks_per_node = 3}, body);
    for (int r = 0; r < 6; ++r) {
      EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(r)) << message_of(e, r);
      EXPECT_THAT(message_of(e, r), HasSubstr(text));
    }
  }
}

}  // namespace
