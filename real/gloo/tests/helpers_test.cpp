// The same programs on sim and on gloo give identical results: the helpers written once above the
// backend interface (object collectives, all_reduce_dict, collect_results, master_only,
// sync_random_seed agreement) and a mixed sequence of tensor collectives.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "dist/sim/run.hpp"
#include "real/gloo/tests/gloo_test_util.hpp"

namespace {

using namespace gloo_test;

// Runs fn on an n-rank sim cluster and on n gloo ranks; both must give the same per-rank results.
template <class F> void expect_same_on_sim_and_gloo(int n, F fn) {
  dist::sim::Cluster cluster;
  cluster.nodes = 1;
  cluster.ranks_per_node = n;
  const auto on_sim = dist::sim::run(cluster, fn);
  const auto on_gloo = run(n, fn);
  EXPECT_EQ(on_sim, on_gloo) << "world " << n;
}

struct Record {
  std::string name;
  std::vector<double> scores;
  std::map<std::string, int> counts;
  template <class A> void serialize(A& ar) { ar(name, scores, counts); }
  friend bool operator==(const Record&, const Record&) = default;
};

Record record_of(int rank) {
  Record r{"rank" + std::to_string(rank), std::vector<double>(static_cast<std::size_t>(rank * 100), 0.5), {}};
  r.counts["x"] = rank;
  return r;
}

TEST(SameOnSimAndGloo, ObjectCollectives) {
  for (const int n : {2, 3, 4})
    expect_same_on_sim_and_gloo(n, [] {
      const int me = dist::get_rank();
      auto all = dist::all_gather_object(record_of(me));
      auto gathered = dist::gather_object(record_of(me), 1);
      std::vector<Record> list{record_of(me), record_of(me + 10)};
      dist::broadcast_object_list(list, dist::get_world_size() - 1);
      std::map<std::string, std::vector<float>> dict{{"a", {1.0f * static_cast<float>(me), 2}}, {"b", {3}}};
      dist::all_reduce_dict(dict, "mean");
      return std::tuple{all, gathered, list, dict};
    });
}

TEST(SameOnSimAndGloo, CollectResultsAndMasterOnly) {
  for (const int n : {2, 3})
    expect_same_on_sim_and_gloo(n, [] {
      const int me = dist::get_rank();
      std::vector<int> part;
      for (int i = me; i < 10; i += dist::get_world_size()) part.push_back(i * 7);
      const auto cpu = dist::collect_results(part, 9, "cpu");
      const auto gpu = dist::collect_results(part, 10, "gpu");
      int calls = 0;
      auto once = dist::master_only([&] {
        ++calls;
        return 42;
      });
      const auto value = once();
      return std::tuple{cpu, gpu, calls, value};
    });
}

TEST(SameOnSimAndGloo, SyncRandomSeedAgreesAcrossRanks) {
  const auto seeds = run(3, [] { return dist::sync_random_seed(); });
  EXPECT_EQ(seeds[0], seeds[1]);
  EXPECT_EQ(seeds[1], seeds[2]);
}

TEST(SameOnSimAndGloo, MixedTensorCollectives) {
  for (const int n : {2, 3, 4})
    expect_same_on_sim_and_gloo(n, [] {
      const int me = dist::get_rank();
      auto a = exact_sum_input<float>(me, 33, 1);
      dist::all_reduce(a, "mean");
      auto t = dist::Tensor::from(exact_sum_input<std::int32_t>(me, 12, 2));
      dist::all_reduce(t, "bxor");
      auto g = dist::all_gather(exact_sum_input<dist::bfloat16>(me, 5, 3));
      auto rs =
          dist::reduce_scatter(exact_sum_input<std::uint8_t>(
                                   me, 4 * static_cast<std::size_t>(dist::get_world_size()), 4),
                               "product");
      std::vector<std::uint64_t> gb;
      for (const auto& part : g)
        for (const auto& x : part) gb.push_back(x.bits);
      const auto span = t.values<std::int32_t>();
      const std::vector<std::int32_t> tv(span.begin(), span.end());
      return std::tuple{a, tv, gb, rs};
    });
}

}  // namespace
