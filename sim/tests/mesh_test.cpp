// Layouts of subgroups on sim: new_subgroups (by size, by the local size, by enumeration) and a
// device mesh, checked by what an all_reduce along each group gives, and their argument errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using sim_test::cluster;
using sim_test::failure_of;
using sim_test::world;
using ::testing::HasSubstr;

// The sum of the global ranks of the caller's group, by an all_reduce on it.
int rank_sum(const dist::Group& g) {
  std::vector<int> v{dist::get_rank()};
  dist::all_reduce(v, dist::ReduceOp::sum, g);
  return v[0];
}

TEST(NewSubgroups, ConsecutiveGroupsOfTheGivenOrLocalSize) {
  const auto sums = dist::sim::run(world(6), [] {
    const auto [mine, all] = dist::new_subgroups(3);
    EXPECT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].ranks(), (std::vector<int>{3, 4, 5}));
    return rank_sum(mine);
  });
  EXPECT_EQ(sums, (std::vector<int>{3, 3, 3, 12, 12, 12}));
  const auto per_node = dist::sim::run(cluster(2, 2), [] {
    return dist::new_subgroups().first.ranks();  // the local size: one group per node
  });
  EXPECT_EQ(per_node[3], (std::vector<int>{2, 3}));
  const auto e = failure_of(world(4), [] { dist::new_subgroups(3); });
  EXPECT_THAT(
      e.outcomes()[0].message,
      HasSubstr("new_subgroups: group_size 3 must be positive and divide the world size 4"));
}

TEST(NewSubgroups, ByEnumerationReturnsTheCallersAndAll) {
  const auto got = dist::sim::run(world(5), [] {
    const auto [mine, all] = dist::new_subgroups_by_enumeration({{4, 0}, {1, 2}});
    EXPECT_EQ(all.size(), 2u);
    return mine.is_member() ? rank_sum(mine) : -1;
  });
  EXPECT_EQ(got, (std::vector<int>{4, 3, 3, -1, 4}));
  const auto e = failure_of(world(3), [] { dist::new_subgroups_by_enumeration({{0, 1}, {1, 2}}); });
  EXPECT_THAT(e.outcomes()[0].message, HasSubstr("rank 1 is in more than one subgroup"));
}

// On a large world every rank gets the list of all subgroups without holding one: each group is
// made when asked for, with the right ranks, and only the caller's has a backend.
TEST(NewSubgroups, TheListOfAllIsMadeOnDemandOnALargeWorld) {
  dist::sim::Cluster big = cluster(512, 8);
  big.schedule = dist::sim::Schedule::deterministic;
  const auto wrong = dist::sim::run(big, [] {
    const auto [mine, all] = dist::new_subgroups(8);
    const int me = dist::get_rank();
    int bad = all.size() != 512u;
    for (const std::size_t i : {std::size_t{0}, std::size_t(me / 8), std::size_t{511}}) {
      const auto ranks = all[i].ranks();
      bad += ranks.size() != 8u || ranks.front() != static_cast<int>(i) * 8;
      bad += all[i].is_member() != (static_cast<int>(i) == me / 8);
    }
    int members = 0;
    for (const dist::Group& g : all) members += g.is_member();
    bad += members != 1;
    bad += static_cast<std::vector<dist::Group>>(all).size() != 512u;
    std::vector<int> v{1};
    try {
      dist::all_reduce(v, dist::ReduceOp::sum, all[(me / 8 + 1) % 512]);
      ++bad;  // not a member: refused
    } catch (const dist::InvalidArgument&) {
    }
    try {
      (void)all[512];
      ++bad;
    } catch (const dist::InvalidArgument& e) {
      bad += std::string(e.what()).find("out of range for a layout of 512") == std::string::npos;
    }
    dist::all_reduce(v, dist::ReduceOp::sum, mine);
    return bad + (v[0] != 8);
  });
  EXPECT_EQ(std::count(wrong.begin(), wrong.end(), 0), 4096) << "ranks with a wrong answer";
}

// A layout is one collective (a split by color and key): ranks that disagree on it are a
// DesyncError at the world's first collective, on 'groups', not a mismatch of group lists.
TEST(NewSubgroups, ALayoutIsOneCollectiveAndRanksThatDisagreeOnItAreADesync) {
  const auto e = failure_of(world(4), [] { dist::new_subgroups(dist::get_rank() == 3 ? 1 : 2); });
  EXPECT_EQ(e.code(), dist::ErrorCode::desync) << e.what();
  EXPECT_THAT(e.what(), HasSubstr("collective on world #1: ranks disagree on 'groups'"));
  // Rank 3 is in the message whichever rank came first (it is the one that differs).
  EXPECT_THAT(e.what(), HasSubstr("rank 3 called new_subgroups(ranks={3})"));
}

// Each dimension's fingerprint describes its lines, not the lists: ranks that lay the mesh out
// differently disagree at its first dimension.
TEST(DeviceMesh, RanksThatDisagreeOnTheShapeAreADesync) {
  const auto e = failure_of(world(4), [] {
    dist::init_device_mesh(dist::get_rank() == 3 ? std::vector<int>{4, 1} : std::vector<int>{2, 2});
  });
  EXPECT_EQ(e.code(), dist::ErrorCode::desync) << e.what();
  EXPECT_THAT(e.what(), HasSubstr("ranks disagree on 'groups'"));
  EXPECT_THAT(e.what(), HasSubstr("rank 3 called new_subgroups(ranks={0,1,2,3})"));
}

// A mesh of three dimensions is three collectives on each rank (its trace's slices), however
// many groups each dimension has; the groups are the mesh's.
TEST(DeviceMesh, EachDimensionIsMadeByOneCollective) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "dist_mesh_trace.json").string();
  auto c = world(8);
  c.trace = path;
  const auto sums = dist::sim::run(c, [] {
    const auto mesh = dist::init_device_mesh({2, 2, 2});
    return rank_sum(mesh.get_group(0)) * 100 + rank_sum(mesh.get_group(2));
  });
  EXPECT_EQ(sums[5], (1 + 5) * 100 + (4 + 5));
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::filesystem::remove(path);
  const auto trace = nlohmann::json::parse(text.str());
  std::map<std::string, int> slices;  // by name
  for (const auto& event : trace.at("traceEvents"))
    if (event.at("ph") == "X") ++slices[event.at("name").get<std::string>()];
  EXPECT_EQ(slices["new_subgroups"], 3 * 8);
  EXPECT_EQ(slices.count("new_group"), 0U);
}

TEST(DeviceMesh, RowMajorGroupsAlongEachDimension) {
  const auto got = dist::sim::run(world(8), [] {
    const auto mesh = dist::init_device_mesh({2, 4}, {"dp", "tp"});
    EXPECT_EQ(mesh.shape(), (std::vector<int>{2, 4}));
    EXPECT_EQ(mesh.size("tp"), 4);
    EXPECT_EQ(mesh.size(), 8);
    const auto c = mesh.coordinate();
    EXPECT_EQ(c[0] * 4 + c[1], dist::get_rank());
    EXPECT_EQ(mesh.get_local_rank("tp"), c[1]);
    EXPECT_EQ(dist::get_rank(mesh.get_group("tp")), c[1]);
    EXPECT_EQ(dist::get_rank(mesh.get_group(0)), c[0]);
    return std::vector<int>{rank_sum(mesh.get_group("dp")), rank_sum(mesh.get_group("tp"))};
  });
  // Rank 6 = {1, 2}: dp group {2, 6}, tp group {4, 5, 6, 7}.
  EXPECT_EQ(got[6], (std::vector<int>{8, 22}));
  EXPECT_EQ(got[1], (std::vector<int>{6, 6}));
  const auto three = dist::sim::run(world(12), [] {
    const auto mesh = dist::init_device_mesh({2, 3, 2});  // dim0, dim1, dim2
    return std::vector<int>{rank_sum(mesh.get_group("dim0")), rank_sum(mesh.get_group("dim1")),
                            rank_sum(mesh.get_group("dim2"))};
  });
  // Rank 5 = {0, 2, 1}: dim0 {5, 11}, dim1 {1, 3, 5}, dim2 {4, 5}.
  EXPECT_EQ(three[5], (std::vector<int>{16, 9, 9}));
}

// A mesh over 4,096 ranks: each rank computes only its own line per dimension (no rank lists
// every group), so this takes about a second. Coordinates, group sizes and an all_reduce of the
// rank along each dimension are checked against the row-major layout computed here.
TEST(DeviceMesh, ALargeWorldsMeshIsMadeFromEachRanksOwnLines) {
  const std::vector<int> shape{64, 8, 8}, stride{64, 8, 1};
  const dist::sim::Cluster c{
      .nodes = 512, .ranks_per_node = 8, .schedule = dist::sim::Schedule::deterministic};
  const auto got = dist::sim::run(c, [&] {
    const auto mesh = dist::init_device_mesh(shape, {"data", "pipeline", "tensor"});
    std::vector<int> row = mesh.coordinate();
    for (int d = 0; d < 3; ++d) {
      row.push_back(dist::get_world_size(mesh.get_group(d)));
      row.push_back(rank_sum(mesh.get_group(d)));
    }
    return row;
  });
  ASSERT_EQ(got.size(), 4096U);
  int wrong = 0;
  for (int r = 0; r < 4096; ++r) {
    std::vector<int> want;
    for (int d = 0; d < 3; ++d) want.push_back(r / stride[d] % shape[d]);
    for (int d = 0; d < 3; ++d) {
      const int base = r - want[d] * stride[d];  // the line: base + i * stride, i < shape
      want.push_back(shape[d]);
      want.push_back(shape[d] * base + stride[d] * shape[d] * (shape[d] - 1) / 2);
    }
    if (got[static_cast<std::size_t>(r)] != want) ++wrong;
  }
  EXPECT_EQ(wrong, 0) << "ranks whose coordinate, group sizes or sums differ (of 4096)";
}

TEST(DeviceMesh, BadShapesAndNamesAreInvalidArguments) {
  const auto message = [](std::function<void()> body) {
    return failure_of(world(4), body).outcomes()[0].message;
  };
  EXPECT_THAT(message([] {
                dist::init_device_mesh({2, 3});
              }),
              HasSubstr("init_device_mesh: shape {2, 3} holds 6 ranks, but the world has 4"));
  EXPECT_THAT(message([] {
                dist::init_device_mesh({1, 2});
              }),
              HasSubstr("shape {1, 2} holds 2 ranks, but the world has 4"));
  EXPECT_THAT(message([] {
                dist::init_device_mesh({1 << 30, 1 << 30, 1 << 30});
              }),
              HasSubstr("holds more than 2^62 ranks, but the world has 4"));
  EXPECT_THAT(message([] {
                dist::init_device_mesh({2, 2}, {"dp"});
              }),
              HasSubstr("1 dim_names for a 2-dimensional shape"));
  EXPECT_THAT(message([] {
                dist::init_device_mesh({2, 2}, {"a", "a"});
              }),
              HasSubstr("dim_names repeat a name"));
  EXPECT_THAT(message([] {
                dist::init_device_mesh({2, 2}, {"dp", "tp"}).get_group("pp");
              }),
              HasSubstr("no dimension named \"pp\" (the mesh's are \"dp\", \"tp\")"));
  EXPECT_THAT(message([] { dist::init_device_mesh({4}).size(1); }),
              HasSubstr("dimension 1 is out of range for a 1-dimensional mesh"));
}

}  // namespace
