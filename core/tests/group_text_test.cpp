// core/group_text: rank lists as ranges and the "except" form, unchanged for small lists and linear
// on 65,536 ranks, and ranks grouped by identical text in the order of their first rank.
#include "core/group_text.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

namespace {

using dist::core::rank_ranges;
using dist::core::ranks_phrase;
using dist::core::RanksByText;

// 0..n-1 without the ranks in `holes` (sorted).
std::vector<int> all_but(int n, const std::vector<int>& holes) {
  std::vector<int> out;
  std::size_t h = 0;
  for (int r = 0; r < n; ++r) {
    if (h < holes.size() && holes[h] == r) {
      ++h;
      continue;
    }
    out.push_back(r);
  }
  return out;
}

TEST(RankRanges, SmallListsReadAsRangesOfThreeOrMore) {
  EXPECT_EQ(rank_ranges(std::vector<int>{}), "");
  EXPECT_EQ(rank_ranges(std::vector<int>{5}), "5");
  EXPECT_EQ(rank_ranges(std::vector<int>{0, 1}), "0, 1");
  EXPECT_EQ(rank_ranges(std::vector<int>{0, 1, 2, 3, 7}), "0-3, 7");
  EXPECT_EQ(rank_ranges(std::vector<int>{0, 1, 2, 3, 7, 9, 10}), "0-3, 7, 9, 10");
  EXPECT_EQ(rank_ranges(std::vector<int>{3, 1, 2}), "3, 1, 2");
  // Seven ranks with a hole: still below the "except" form's 8 ranks.
  EXPECT_EQ(rank_ranges(std::vector<int>{0, 1, 2, 4, 5, 6, 8}), "0-2, 4-6, 8");
  EXPECT_EQ(ranks_phrase(std::vector<int>{2}), "rank 2");
  EXPECT_EQ(ranks_phrase(std::vector<int>{1, 3}), "ranks 1, 3");
  EXPECT_EQ(ranks_phrase(std::vector<int>{0, 1, 2, 3, 7}), "ranks 0-3, 7");
}

TEST(RankRanges, FewHolesInALongListReadAsExcept) {
  EXPECT_EQ(rank_ranges(std::vector<int>{0, 1, 2, 3, 5, 6, 7, 8}), "0-8 except 4");
  EXPECT_EQ(rank_ranges(std::vector<int>{0, 1, 2, 4, 5, 6, 8, 9, 10}), "0-10 except 3, 7");
  EXPECT_EQ(rank_ranges(all_but(64, {17})), "0-63 except 17");
  EXPECT_EQ(ranks_phrase(all_but(64, {17})), "ranks 0-63 except 17");
  // As many entries either way: the plain form.
  EXPECT_EQ(rank_ranges(std::vector<int>{0, 1, 2, 3, 6, 7, 8, 9}), "0-3, 6-9");
  EXPECT_EQ(rank_ranges(std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}), "0-7");
  // Only an increasing list has holes: out of order or repeated ranks keep the plain form.
  EXPECT_EQ(rank_ranges(std::vector<int>{10, 0, 1, 2, 3, 4, 5, 6, 8}), "10, 0-6, 8");
  EXPECT_EQ(rank_ranges(std::vector<int>{0, 1, 2, 3, 3, 4, 5, 6, 7, 9}), "0-3, 3-7, 9");
}

TEST(RankRanges, SixtyFiveThousandRanksInOnePass) {
  std::vector<int> all(65536);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(rank_ranges(all), "0-65535");
  EXPECT_EQ(rank_ranges(all_but(65536, {17})), "0-65535 except 17");
  EXPECT_EQ(rank_ranges(all_but(65536, {17, 40000, 40001, 40002, 40003})),
            "0-65535 except 17, 40000-40003");
  // Every even rank: 32,768 runs of one against 32,767 holes of one.
  std::vector<int> evens;
  for (int r = 0; r < 65536; r += 2) evens.push_back(r);
  const std::string text = rank_ranges(evens);
  EXPECT_EQ(text.substr(0, 24), "0-65534 except 1, 3, 5, ");
  EXPECT_EQ(text.substr(text.size() - 14), ", 65531, 65533");
  // Every third rank missing: pairs, so the holes (one entry each) win.
  std::vector<int> thirds;
  for (int r = 0; r < 65536; ++r)
    if (r % 3 != 2) thirds.push_back(r);
  EXPECT_EQ(rank_ranges(thirds).substr(0, 24), "0-65535 except 2, 5, 8, ");
}

TEST(RanksByText, GroupsIdenticalTextsInTheOrderOfTheirFirstRank) {
  RanksByText by_text;
  for (int r = 0; r < 64; ++r) by_text.add(r, r == 17 ? "returned" : "waits in barrier()");
  by_text.add(64, "waits in all_reduce()");
  ASSERT_EQ(by_text.groups().size(), 3u);
  EXPECT_EQ(by_text.groups()[0].ranks.size(), 63u);
  EXPECT_EQ(by_text.lines(": "),
            "\n  ranks 0-63 except 17: waits in barrier()"
            "\n  rank 17: returned"
            "\n  rank 64: waits in all_reduce()");
  EXPECT_EQ(RanksByText().lines(": "), "");
}

TEST(RanksByText, SixtyFiveThousandRanksWithTwoTexts) {
  RanksByText by_text;
  for (int r = 0; r < 65536; ++r) by_text.add(r, r == 65535 ? "b" : "a");
  EXPECT_EQ(by_text.lines(" called "), "\n  ranks 0-65534 called a\n  rank 65535 called b");
}

}  // namespace
