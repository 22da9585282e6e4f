// Deterministic ranks as fibers: a 4,096-rank world checked value by value against the reference,
// each rank's exception state kept across switches, helper threads refused with the cure, and
// traces of a subset of ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "reference/collectives.hpp"

namespace {

using dist::sim::Cluster;
using dist::sim::Schedule;
using ::testing::HasSubstr;
namespace ref = dist::reference;

Cluster fiber_world(int nodes, int ranks_per_node) {
  return Cluster{.nodes = nodes,
                 .ranks_per_node = ranks_per_node,
                 .seed = 7,
                 .schedule = Schedule::deterministic};
}

std::vector<std::int64_t> input_of(int rank) {
  return {rank, 3 * rank - 5000, (rank * 7919) % 1013};
}

struct Results {
  std::vector<std::int64_t> sum, max, from_last, node_sum;
  std::vector<std::int64_t> gathered;  // on rank 17 only
};

TEST(Fibers, FourThousandRanksMatchTheReferenceValueByValue) {
  constexpr int nodes = 512, per_node = 8, n = nodes * per_node, root = 17;
  const auto got = dist::sim::run(fiber_world(nodes, per_node), [] {
    Results r;
    const auto mine = input_of(dist::get_rank());
    r.sum = r.max = r.from_last = r.node_sum = mine;
    dist::all_reduce(r.sum, dist::ReduceOp::sum);
    dist::all_reduce(r.max, dist::ReduceOp::max);
    dist::broadcast(r.from_last, n - 1);
    dist::all_reduce(r.node_sum, dist::ReduceOp::sum, *dist::get_local_group());
    for (auto& part : dist::gather(mine, root))
      r.gathered.insert(r.gathered.end(), part.begin(), part.end());
    dist::barrier();
    return r;
  });
  ref::PerRank<std::int64_t> in;
  for (int rank = 0; rank < n; ++rank) in.push_back(input_of(rank));
  const auto sum = ref::all_reduce(in, ref::Op::sum);
  const auto max = ref::all_reduce(in, ref::Op::max);
  const auto from_last = ref::broadcast(in, n - 1);
  const auto gathered = ref::gather(in, root);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
  int wrong = 0;
  for (int rank = 0; rank < n; ++rank) {
    const auto& g = got[static_cast<std::size_t>(rank)];
    const ref::PerRank<std::int64_t> node(in.begin() + rank / per_node * per_node,
                                          in.begin() + (rank / per_node + 1) * per_node);
    const auto node_sum = ref::all_reduce(node, ref::Op::sum)[0];
    const auto r = static_cast<std::size_t>(rank);
    wrong += g.sum != sum[r] || g.max != max[r] || g.from_last != from_last[r] ||
             g.node_sum != node_sum || g.gathered != gathered[r];
  }
  EXPECT_EQ(wrong, 0) << "ranks with a value unlike the reference's";
}

TEST(Fibers, ARankSuspendedInACatchBlockKeepsItsException) {
  const auto got = dist::sim::run(fiber_world(1, 4), [] {
    try {
      throw std::runtime_error("rank " + std::to_string(dist::get_rank()));
    } catch (const std::runtime_error&) {
      dist::barrier();  // every rank switches out while handling its own exception
      try {
        throw;
      } catch (const std::runtime_error& again) {
        return std::string(again.what()) + " " + std::to_string(std::uncaught_exceptions());
      }
    }
  });
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(got[static_cast<std::size_t>(r)], "rank " + std::to_string(r) + " 0");
}

TEST(Fibers, AHelperThreadActingAsItsRankIsToldToUseThreads) {
  std::vector<std::string> messages;
  dist::sim::run(fiber_world(1, 2), [&] {
    const auto me = dist::sim::current_rank();
    std::string what;
    std::thread helper([&] {
      dist::sim::ScopedRank scope(me);
      try {
        dist::barrier();
      } catch (const dist::InvalidArgument& e) {
        what = e.what();
      }
    });
    helper.join();
    dist::barrier();
    if (dist::get_rank() == 0) messages.push_back(what);
  });
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_THAT(messages[0], HasSubstr("Cluster::fibers = false"));
}

TEST(Fibers, ThreadsStillRunADeterministicWorldWhenAsked) {
  Cluster c = fiber_world(1, 3);
  c.fibers = false;
  const auto got = dist::sim::run(c, [] {
    std::vector<int> v{dist::get_rank()};
    std::thread helper([&, me = dist::sim::current_rank()] {
      dist::sim::ScopedRank scope(me);
      dist::all_reduce(v);
    });
    helper.join();
    return v[0];
  });
  EXPECT_EQ(got, (std::vector<int>{3, 3, 3}));
  EXPECT_THAT(dist::sim::to_string(c), HasSubstr(".fibers = false"));
}

TEST(TraceRanks, KeepOnlyTheRanksAskedFor) {
  const auto path = (std::filesystem::temp_directory_path() / "dist_trace_ranks.json").string();
  Cluster c = fiber_world(8, 8);
  c.trace = path;
  c.trace_ranks = {0, 63};
  dist::sim::run(c, [] {
    std::vector<float> v{1.0f};
    dist::all_reduce(v);
    dist::barrier();
  });
  std::ifstream in(path);
  const auto json = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  std::set<int> tracks;
  int slices = 0;
  for (const auto& e : json.at("traceEvents"))
    if (e.at("ph") == "X") {
      tracks.insert(e.at("tid").get<int>());
      ++slices;
    }
  EXPECT_EQ(tracks, (std::set<int>{0, 63}));
  EXPECT_EQ(slices, 4) << "two calls on each of two ranks";
}

TEST(TraceRanks, ARankOutsideTheWorldIsRefused) {
  Cluster c = fiber_world(1, 4);
  c.trace = "unused.json";
  c.trace_ranks = {4};
  try {
    dist::sim::run(c, [] {});
    ADD_FAILURE() << "accepted";
  } catch (const dist::InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("trace_ranks holds 4"));
  }
}

}  // namespace
