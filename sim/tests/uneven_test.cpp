// Uneven all_to_all on sim: what its arguments and a disagreement between ranks raise. (Its data
// is checked by the conformance suite.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using sim_test::failure_of;
using sim_test::world;
using ::testing::HasSubstr;
using Splits = std::vector<std::int64_t>;

TEST(UnevenAllToAll, SplitsThatDisagreeAreADesyncErrorNamingBothRanks) {
  const auto e = failure_of(world(3), [] {
    const int r = dist::get_rank();
    // Rank 0 sends 2 elements to rank 2, which expects 3 from it; the other pairs agree.
    const Splits in = r == 0 ? Splits{1, 1, 2} : Splits{1, 1, 1};
    const Splits out = r == 2 ? Splits{3, 1, 1} : Splits{1, 1, 1};
    std::vector<float> input(4), output(5);
    input.resize(static_cast<std::size_t>(in[0] + in[1] + in[2]));
    output.resize(static_cast<std::size_t>(out[0] + out[1] + out[2]));
    dist::all_to_all(std::span<float>(output), std::span<const float>(input), out, in);
  });
  for (const int r : {0, 2}) {
    EXPECT_TRUE(e.failed_with<dist::DesyncError>(r)) << e.what();
    EXPECT_THAT(e.outcomes()[static_cast<std::size_t>(r)].message,
                HasSubstr("all_to_all with splits: ranks " + std::to_string(r) + " and " +
                          std::to_string(2 - r) + " disagree on the size of a block"));
    EXPECT_THAT(e.outcomes()[static_cast<std::size_t>(r)].message, HasSubstr("x 2"));
    EXPECT_THAT(e.outcomes()[static_cast<std::size_t>(r)].message, HasSubstr("x 3"));
  }
}

TEST(UnevenAllToAll, BadSplitsAreInvalidArgumentsBeforeAnythingMoves) {
  const auto message = [](Splits out, Splits in, std::size_t out_count, std::size_t in_count) {
    const auto e = failure_of(world(2), [&] {
      std::vector<int> output(out_count), input(in_count);
      dist::all_to_all(std::span<int>(output), std::span<const int>(input), out, in);
    });
    EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(0)) << e.what();
    return e.outcomes()[0].message;
  };
  EXPECT_THAT(message({1, 1}, {3, -1}, 2, 2),
              HasSubstr("all_to_all: argument 'input_splits'[1] = -1 is negative"));
  EXPECT_THAT(message({1, 1}, {1, 2}, 2, 2),
              HasSubstr("argument 'input_splits' sums to 3, but 'input' holds 2 elements"));
  EXPECT_THAT(message({2, 0}, {1, 1}, 2, 2),
              HasSubstr("all_to_all: the caller (group rank 0) sends itself input_splits[0] = 1 "
                        "elements but expects output_splits[0] = 2"));
  EXPECT_THAT(message({2}, {1, 1}, 2, 2),
              HasSubstr("argument 'output_splits' has 1 entries for a group of 2 ranks"));
  const auto lists = failure_of(world(2), [] {
    dist::all_to_all(std::vector<std::vector<int>>{{1}, {2}, {3}});
  });
  EXPECT_THAT(lists.outcomes()[1].message,
              HasSubstr("all_to_all: 3 input lists for a group of 2 ranks"));
}

TEST(UnevenAllToAll, TheListFormLearnsTheSizes) {
  const auto got = dist::sim::run(world(3), [] {
    const int r = dist::get_rank();
    std::vector<std::vector<int>> inputs(3);
    for (int j = 0; j < 3; ++j)
      inputs[static_cast<std::size_t>(j)].assign(static_cast<std::size_t>(r + j), r * 10 + j);
    return dist::all_to_all(inputs);
  });
  // Rank 2 gets from rank i a list of i + 2 copies of i * 10 + 2.
  EXPECT_EQ(got[2], (std::vector<std::vector<int>>{{2, 2}, {12, 12, 12}, {22, 22, 22, 22}}));
  EXPECT_EQ(got[0][0], std::vector<int>{});  // rank 0 sends itself nothing
  EXPECT_EQ(dist::all_to_all(std::vector<std::vector<int>>{{5, 6}}),
            (std::vector<std::vector<int>>{{5, 6}}));  // not distributed
}

}  // namespace
