// The mpi backend's scratch: blocks of 64 KiB or more are kept for the next call of a similar size
// (at most four and 512 MiB, none above 512 MiB), smaller ones are freed, and a copy has its own
// bytes. The pool is the process's: each test uses sizes no other test keeps.
#include "real/mpi/scratch.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using dist::real::Scratch;
using dist::real::scratch_pool_stats;
constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;

TEST(Scratch, ALargeBlockServesTheNextCallOfASimilarSize) {
  Scratch first(3 * MiB);
  std::byte* const block = first.data();
  first.clear();
  EXPECT_TRUE(first.empty());
  const Scratch next(5 * MiB / 2);
  EXPECT_EQ(next.data(), block);
  EXPECT_EQ(next.size(), 5 * MiB / 2);
}

TEST(Scratch, ABlockMoreThanTwiceTheCallIsLeftForALargerOne) {
  Scratch large(40 * MiB);
  std::byte* const block = large.data();
  large.clear();
  const Scratch small(10 * MiB);
  EXPECT_NE(small.data(), block);
  const Scratch again(33 * MiB);
  EXPECT_EQ(again.data(), block);
}

TEST(Scratch, SmallAndHugeBlocksAreFreedNotKept) {
  const auto before = scratch_pool_stats();
  { Scratch small(16 * KiB); }
  { Scratch huge(std::size_t{600} << 20); }  // not touched: only its addresses are reserved
  const auto after = scratch_pool_stats();
  EXPECT_EQ(after.blocks, before.blocks);
  EXPECT_EQ(after.bytes, before.bytes);
}

TEST(Scratch, ThePoolKeepsAtMostFourBlocks) {
  { Scratch a(200 * KiB), b(201 * KiB), c(202 * KiB), d(203 * KiB), e(204 * KiB), f(205 * KiB); }
  const auto stats = scratch_pool_stats();
  EXPECT_EQ(stats.blocks, 4u);
  EXPECT_EQ(stats.bytes, (200 + 201 + 202 + 203) * KiB);  // the four freed last: d, c, b, a
}

TEST(Scratch, ThePoolHoldsAtMost512MiB) {
  { Scratch a(200 * MiB), b(201 * MiB), c(202 * MiB); }  // not touched: addresses only
  const auto stats = scratch_pool_stats();
  EXPECT_LE(stats.bytes, 512 * MiB);
  EXPECT_GE(stats.bytes, (201 + 200) * MiB);  // the two freed last: b, a
}

TEST(Scratch, ACopyHasItsOwnBytesAndAMoveTakesTheBlock) {
  Scratch original(100 * KiB);
  std::memset(original.data(), 7, original.size());
  const Scratch copy = original;
  ASSERT_EQ(copy.size(), original.size());
  EXPECT_NE(copy.data(), original.data());
  EXPECT_EQ(std::memcmp(copy.data(), original.data(), copy.size()), 0);
  std::byte* const block = original.data();
  const Scratch moved = std::move(original);
  EXPECT_EQ(moved.data(), block);
  EXPECT_TRUE(original.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
}

}  // namespace
