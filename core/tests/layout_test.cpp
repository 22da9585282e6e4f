// Layouts built by rule (core/layout.hpp): each rank's own line, color and key agree with every
// list written out the slow way (each group's ranks in row-major order), and the fingerprint is
// the same on every rank and differs between layouts.
#include "core/layout.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <numeric>
#include <set>
#include <vector>

namespace {

using Lists = std::vector<std::vector<int>>;

// Dimension d's lines written out: one per rank whose coordinate d is 0, in rank order.
Lists mesh_lists(const std::vector<int>& shape, std::size_t d) {
  const int world = std::accumulate(shape.begin(), shape.end(), 1, std::multiplies<>());
  int stride = 1;
  for (std::size_t e = d + 1; e < shape.size(); ++e) stride *= shape[e];
  Lists lists;
  for (int base = 0; base < world; ++base) {
    if (base / stride % shape[d] != 0) continue;
    std::vector<int> line;
    for (int i = 0; i < shape[d]; ++i) line.push_back(base + i * stride);
    lists.push_back(line);
  }
  return lists;
}

// The number of ranks whose layout disagrees with `lists` (own list, color, key, list(i), count).
int wrong_ranks(const Lists& lists, int world, const std::function<dist::core::Layout(int)>& of) {
  int wrong = 0;
  for (int r = 0; r < world; ++r) {
    const auto layout = of(r);
    bool ok = layout.count == lists.size() && layout.color >= 0;
    if (ok) {
      const auto& line = lists[static_cast<std::size_t>(layout.color)];
      ok = layout.own() == line && layout.own_is(line) &&
           line[static_cast<std::size_t>(layout.position)] == r;
    }
    for (std::size_t i = 0; ok && i < lists.size(); ++i) ok = layout.list(i) == lists[i];
    wrong += ok ? 0 : 1;
  }
  return wrong;
}

TEST(Layout, MeshLinesAreTheRowMajorOnesInTheirOrder) {
  const std::vector<std::vector<int>> shapes = {{8},       {2, 4},    {4, 2},
                                                {2, 3, 2}, {3, 1, 4}, {2, 2, 2, 2}};
  for (const auto& shape : shapes) {
    const int world = std::accumulate(shape.begin(), shape.end(), 1, std::multiplies<>());
    for (std::size_t d = 0; d < shape.size(); ++d)
      EXPECT_EQ(wrong_ranks(mesh_lists(shape, d), world,
                            [&](int r) { return dist::core::mesh_layout(shape, d, r); }),
                0)
          << "shape of " << shape.size() << " dimension(s), dimension " << d;
  }
}

TEST(Layout, ConsecutiveBlocksAndListedLayouts) {
  const Lists blocks = {{0, 1, 2}, {3, 4, 5}};
  EXPECT_EQ(wrong_ranks(blocks, 6, [](int r) { return dist::core::strided_layout(6, 3, 1, r); }),
            0);
  const auto shared_blocks = std::make_shared<const Lists>(blocks);
  EXPECT_EQ(
      wrong_ranks(blocks, 6, [&](int r) { return dist::core::listed_layout(shared_blocks, r); }),
      0);
  const Lists some = {{4, 0}, {1, 2}};
  const auto shared_some = std::make_shared<const Lists>(some);
  const auto outside = dist::core::listed_layout(shared_some, 3);
  EXPECT_EQ(outside.color, -1);
  EXPECT_TRUE(outside.own().empty());
  EXPECT_FALSE(outside.own_is({4, 0}));
  EXPECT_EQ(dist::core::listed_layout(shared_some, 0).position, 1);
  EXPECT_EQ(outside.hash, dist::core::layout_hash(some));
}

TEST(Layout, TheFingerprintIsEveryRanksAndNamesTheLayout) {
  std::set<std::uint32_t> per_layout;
  const std::vector<int> shape{4, 2, 2};
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::set<std::uint32_t> hashes;
    for (int r = 0; r < 16; ++r) hashes.insert(dist::core::mesh_layout(shape, d, r).hash);
    EXPECT_EQ(hashes.size(), 1U) << "dimension " << d;
    per_layout.insert(*hashes.begin());
  }
  per_layout.insert(dist::core::strided_layout(16, 4, 1, 0).hash);
  per_layout.insert(dist::core::strided_layout(16, 8, 1, 0).hash);
  EXPECT_EQ(per_layout.size(), 5U);
}

// A line of a large mesh costs its own length: the layout of a 65,536-rank mesh is built by rule.
TEST(Layout, ALargeMeshsLineIsComputedNotSearched) {
  const std::vector<int> shape{512, 16, 8};
  const auto layout = dist::core::mesh_layout(shape, 0, 65535);
  EXPECT_EQ(layout.count, 128U);
  EXPECT_EQ(layout.color, 127);
  EXPECT_EQ(layout.position, 511);
  ASSERT_EQ(layout.own().size(), 512U);
  EXPECT_EQ(layout.own().front(), 127);
  EXPECT_EQ(layout.own().back(), 65535);
  EXPECT_EQ(layout.list(127), layout.own());
  // The rank's list is a rule until asked for; compared without being made.
  EXPECT_TRUE(layout.by_rule());
  auto line = layout.list(127);
  EXPECT_TRUE(layout.own_is(line));
  line[200] += 1;
  EXPECT_FALSE(layout.own_is(line));
  line.pop_back();
  EXPECT_FALSE(layout.own_is(line));
  // A list made from the rule is checked by its length and ends only.
  line = layout.list(127);
  EXPECT_TRUE(layout.own_is_from_this_layout(line));
  line.back() += 1;
  EXPECT_FALSE(layout.own_is_from_this_layout(line));
  line = layout.list(126);
  EXPECT_FALSE(layout.own_is_from_this_layout(line));
  line.pop_back();
  EXPECT_FALSE(layout.own_is_from_this_layout(line));
  // Explicit lists in full.
  const auto listed =
      dist::core::listed_layout(std::make_shared<const Lists>(Lists{{0, 1, 2}, {3, 4, 5}}), 4);
  EXPECT_TRUE(listed.own_is_from_this_layout({3, 4, 5}));
  EXPECT_FALSE(listed.own_is_from_this_layout({3, 0, 5}));
}

}  // namespace
