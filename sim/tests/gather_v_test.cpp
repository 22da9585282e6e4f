// The variable-size all_gather the object helpers stand on: every rank contributes its own count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"

namespace {

std::vector<std::size_t> counts_for(int world) {
  std::vector<std::size_t> counts;
  for (int r = 0; r < world; ++r) counts.push_back(r == 1 ? 0 : static_cast<std::size_t>(3 * r + 1));
  return counts;
}

TEST(AllGatherV, EveryRankGetsEveryContributionInRankOrder) {
  for (int n : {1, 2, 3, 8}) {
    const auto counts = counts_for(n);
    const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
    std::vector<std::int32_t> expected;
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < counts[static_cast<std::size_t>(r)]; ++i)
        expected.push_back(static_cast<std::int32_t>(r * 100 + static_cast<int>(i)));
    const auto out = dist::sim::run({.nodes = 1, .ranks_per_node = n}, [&] {
      const int r = dist::get_rank();
      std::vector<std::int32_t> mine;
      for (std::size_t i = 0; i < counts[static_cast<std::size_t>(r)]; ++i)
        mine.push_back(static_cast<std::int32_t>(r * 100 + static_cast<int>(i)));
      std::vector<std::int32_t> all(total);
      dist::detail::all_gather_v(dist::detail::buffer_of(std::span<std::int32_t>(all)),
                                 dist::detail::input_of(std::span<std::int32_t>(mine)), counts, {})
          .wait();
      return all;
    });
    for (const auto& all : out) EXPECT_EQ(all, expected) << "world " << n;
  }
}

TEST(AllGatherV, DisagreeingCountsAreADesync) {
  try {
    dist::sim::run({.nodes = 1, .ranks_per_node = 2}, [] {
      const int r = dist::get_rank();
      std::vector<std::size_t> counts{1, r == 0 ? 2u : 3u};
      std::vector<std::uint8_t> mine(counts[static_cast<std::size_t>(r)]);
      std::vector<std::uint8_t> all(counts[0] + counts[1]);
      dist::detail::all_gather_v(dist::detail::buffer_of(std::span<std::uint8_t>(all)),
                                 dist::detail::input_of(std::span<std::uint8_t>(mine)), counts, {})
          .wait();
    });
    FAIL() << "expected a DesyncError";
  } catch (const dist::sim::RunError& e) {
    EXPECT_TRUE(e.failed_with<dist::DesyncError>(0));
    EXPECT_TRUE(e.failed_with<dist::DesyncError>(1));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("counts={1,2}"));
  }
}

}  // namespace
