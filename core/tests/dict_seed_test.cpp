// all_reduce_dict (vectors, scalars and Tensors; MMEngine's examples; the key-set DesyncError) and
// sync_random_seed (shared, reproducible per Cluster.seed, every rank's stream advancing).
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
using FloatDict = std::map<std::string, std::vector<float>>;
using IntDict = std::map<std::string, std::vector<std::int64_t>>;

TEST(AllReduceDictNotDistributed, IsANoOpThatIgnoresTheOpName) {
  FloatDict d{{"a", {1.5f}}};
  dist::all_reduce_dict(d, "avg");
  EXPECT_EQ(d, (FloatDict{{"a", {1.5f}}}));
  std::map<std::string, dist::Tensor> mixed{{"i", dist::Tensor::from(std::vector<std::int64_t>{1})},
                                            {"f", dist::Tensor::from(std::vector<float>{2})}};
  EXPECT_NO_THROW(dist::all_reduce_dict(mixed));
}

TEST(AllReduceDict, MMEngineExampleWithVectorsAndTensors) {
  // Rank 0 {'b': [1, 2], 'a': [[1.5, 2.5]]}, rank 1 {'a': [[0.5, 0.5]], 'b': [3, 3]}.
  const auto results = dist::sim::run(world(2), [] {
    const bool r0 = dist::get_rank() == 0;
    FloatDict d{{"b", r0 ? std::vector<float>{1, 2} : std::vector<float>{3, 3}},
                {"a", r0 ? std::vector<float>{1.5f, 2.5f} : std::vector<float>{0.5f, 0.5f}}};
    dist::all_reduce_dict(d);
    const auto a = dist::Tensor::from(
        r0 ? std::vector<float>{1.5f, 2.5f} : std::vector<float>{0.5f, 0.5f}, {1, 2});
    const auto b = dist::Tensor::from(r0 ? std::vector<float>{1, 2} : std::vector<float>{3, 3});
    std::map<std::string, dist::Tensor> t{{"b", b}, {"a", a}};
    dist::all_reduce_dict(t, "sum");
    const auto va = t.at("a").values<float>();
    const auto vb = t.at("b").values<float>();
    const auto original = a.values<float>();
    return std::make_tuple(d, std::vector<float>(va.begin(), va.end()),
                           std::vector<float>(vb.begin(), vb.end()), t.at("a").shape(),
                           std::vector<float>(original.begin(), original.end()));
  });
  for (int r = 0; r < 2; ++r) {
    const auto& [d, a, b, shape, original] = results[static_cast<std::size_t>(r)];
    EXPECT_EQ(d, (FloatDict{{"a", {2, 3}}, {"b", {4, 5}}}));
    EXPECT_EQ(a, (std::vector<float>{2, 3}));
    EXPECT_EQ(b, (std::vector<float>{4, 5}));
    EXPECT_EQ(shape, (std::vector<std::int64_t>{1, 2}));
    // The caller's tensor is replaced in the dict, not modified.
    EXPECT_EQ(original,
              r == 0 ? (std::vector<float>{1.5f, 2.5f}) : (std::vector<float>{0.5f, 0.5f}));
  }
}

TEST(AllReduceDict, IntegerMeanTruncatesAndOpsFollowAllReduce) {
  const auto means = dist::sim::run(world(2), [] {
    IntDict d{{"k", dist::get_rank() == 0 ? std::vector<std::int64_t>{1, 2}
                                          : std::vector<std::int64_t>{2, 2}}};
    dist::all_reduce_dict(d, "mean");
    return d;
  });
  for (const auto& d : means) EXPECT_EQ(d, (IntDict{{"k", {1, 2}}}));
  const auto results = dist::sim::run(world(3), [] {
    const auto r = static_cast<std::int64_t>(dist::get_rank());
    IntDict mx{{"x", {r, -r}}, {"y", {10 * r}}};
    std::map<std::string, double> scalars{{"loss", 1.0 + static_cast<double>(r)}, {"acc", 0.5}};
    std::map<std::string, std::int32_t> products{{"p", static_cast<std::int32_t>(r + 2)}};
    dist::all_reduce_dict(mx, dist::ReduceOp::max);
    dist::all_reduce_dict(scalars, "MEAN");
    dist::all_reduce_dict(products, "product");
    return std::make_tuple(mx, scalars, products);
  });
  for (const auto& [mx, scalars, products] : results) {
    EXPECT_EQ(mx, (IntDict{{"x", {2, 0}}, {"y", {20}}}));
    EXPECT_EQ(scalars, (std::map<std::string, double>{{"acc", 0.5}, {"loss", 2.0}}));
    EXPECT_EQ(products.at("p"), 2 * 3 * 4);
  }
}

TEST(AllReduceDict, WorldOfOneEmptyDictsAndSubgroups) {
  const auto one = dist::sim::run(world(1), [] {
    FloatDict d{{"a", {1, 2}}};
    dist::all_reduce_dict(d, "bogus");
    return d;
  });
  EXPECT_EQ(one[0], (FloatDict{{"a", {1, 2}}}));
  const auto results = dist::sim::run(world(3), [] {
    FloatDict empty;
    dist::all_reduce_dict(empty);
    std::map<std::string, dist::Tensor> no_tensors;
    dist::all_reduce_dict(no_tensors);
    const auto pair = dist::new_group({1, 2});
    FloatDict d{{"v", {static_cast<float>(dist::get_rank())}}};
    if (pair.is_member()) dist::all_reduce_dict(d, "sum", pair);
    return d.at("v")[0];
  });
  EXPECT_EQ(results, (std::vector<float>{0, 3, 3}));
}

TEST(AllReduceDict, DifferentKeysRaiseDesyncOnEveryRankNamingThem) {
  const auto e = expect_failure(world(3), [] {
    const int r = dist::get_rank();
    FloatDict d{{"a", std::vector<float>(r == 2 ? 3u : 2u)}};
    d[r == 1 ? "c" : "b"] = {1};
    dist::all_reduce_dict(d);
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(e.failed_with<dist::DesyncError>(r)) << message_of(e, r);
    const auto m = message_of(e, r);
    EXPECT_THAT(m, HasSubstr("all_reduce_dict: the ranks hold different dicts"));
    EXPECT_THAT(m, HasSubstr("rank 1: lacks 'b'; has extra 'c';"));
    EXPECT_THAT(m, HasSubstr("rank 2: 'a' holds 3 x float32 (rank 0: 2 x float32);"));
  }
  // Same keys and sizes, different dtypes (Tensor values), on a world of 2.
  const auto t = expect_failure(world(2), [] {
    std::map<std::string, dist::Tensor> d;
    if (dist::get_rank() == 0)
      d["k"] = dist::Tensor::from(std::vector<float>{1});
    else
      d["k"] = dist::Tensor::from(std::vector<double>{1});
    dist::all_reduce_dict(d);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(t.failed_with<dist::DesyncError>(r)) << message_of(t, r);
    EXPECT_THAT(message_of(t, r), HasSubstr("rank 1: 'k' holds 1 x float64 (rank 0: 1 x float32)"));
  }
}

TEST(AllReduceDict, MixedTensorDtypesUnknownOpsAndBitwiseFloatsAreInvalid) {
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"values have different dtypes ('f' is float32, 'i' is int64)",
       [] {
         std::map<std::string, dist::Tensor> d{
             {"i", dist::Tensor::from(std::vector<std::int64_t>{1})},
             {"f", dist::Tensor::from(std::vector<float>{2})}};
         dist::all_reduce_dict(d);
       }},
      {"avg",
       [] {
         FloatDict d{{"a", {1}}};
         dist::all_reduce_dict(d, "avg");
       }},
      {"'band' is not defined for dtype float32",
       [] {
         FloatDict d{{"a", {1}}};
         dist::all_reduce_dict(d, dist::ReduceOp::band);
       }},
  };
  for (const auto& [text, body] : cases) {
    const auto e = expect_failure(world(2), body);
    for (int r = 0; r < 2; ++r) {
      EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(r)) << message_of(e, r);
      EXPECT_THAT(message_of(e, r), HasSubstr(text));
    }
  }
}

TEST(SyncRandomSeed, SharedInRangeAndReproducible) {
  auto seeds = [](int n, std::uint64_t seed) {
    return dist::sim::run({.nodes = 1, .ranks_per_node = n, .seed = seed},
                          [] { return dist::sync_random_seed(); });
  };
  for (int n : {1, 2, 3}) {
    const auto a = seeds(n, 7);
    for (int s : a) {
      EXPECT_EQ(s, a[0]);
      EXPECT_GE(s, 0);
    }
    EXPECT_EQ(seeds(n, 7), a);  // the same Cluster.seed gives the same seed
    EXPECT_NE(seeds(n, 8)[0], a[0]);
  }
  const int outside = dist::sync_random_seed();
  EXPECT_GE(outside, 0);
}

TEST(SyncRandomSeed, IsRankZerosDrawAndEveryRankDraws) {
  const dist::sim::Cluster cluster{.nodes = 1, .ranks_per_node = 3, .seed = 42};
  const auto fresh = dist::sim::run(cluster, [] {
    auto& rng = dist::sim::rank_rng();
    const auto first = rng();
    return std::make_pair(first, rng());
  });
  const auto synced = dist::sim::run(cluster, [] {
    const int seed = dist::sync_random_seed();
    return std::make_pair(seed, dist::sim::rank_rng()());
  });
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(synced[r].first, static_cast<int>(fresh[0].first >> 33));
    EXPECT_EQ(synced[r].second, fresh[r].second) << "rank " << r << " did not draw exactly once";
  }
  // On a group, its rank 0 (global rank 2 here) provides the seed.
  const auto grouped = dist::sim::run(cluster, [] {
    const auto g = dist::new_group({2, 0});
    return g.is_member() ? dist::sync_random_seed(g) : -1;
  });
  EXPECT_EQ(grouped, (std::vector<int>{static_cast<int>(fresh[2].first >> 33), -1,
                                       static_cast<int>(fresh[2].first >> 33)}));
}

}  // namespace
