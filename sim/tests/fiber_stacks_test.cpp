// The fiber ranks' stacks: guard regions while the map limit allows one per stack; past it,
// stacks packed with a canary each, the canary of a stack on the page of the stack below's top
// and each top a line below a page boundary, and an overwritten canary seen (what Fibers checks
// at every switch).
#include "sim/fiber_stacks.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace {

using dist::sim::FiberStacks;

std::size_t max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::size_t value = 0;
  in >> value;
  return value;
}

std::uintptr_t page_of(const std::byte* at) {
  return reinterpret_cast<std::uintptr_t>(at) / static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
}

TEST(FiberStacks, AFewStacksGetGuardRegions) {
  FiberStacks stacks(4, 64 * 1024);
  if (max_map_count() < 3 * 4096) GTEST_SKIP() << "vm.max_map_count is too low for guard regions";
  EXPECT_TRUE(stacks.guarded());
  const auto a = stacks.take();
  EXPECT_EQ(a.size, std::size_t{64 * 1024});
  EXPECT_TRUE(stacks.intact(a));
  stacks.give_back(a);
}

TEST(FiberStacks, PastTheMapLimitACanaryOnThePageOfTheStackBelowsTop) {
  // More stacks than vm.max_map_count leaves mappings for: canaries instead of guard regions
  // (no slab is mapped until a stack is taken, so asking is cheap).
  FiberStacks stacks(max_map_count() + 1, 64 * 1024);
  ASSERT_FALSE(stacks.guarded());
  EXPECT_NE(stacks.protection().find("canary"), std::string::npos) << stacks.protection();
  const auto below = stacks.take();
  const auto above = stacks.take();
  // Packed: the stack above starts where the one below ends, with its canary on the page that
  // holds the top of the stack below (so a rank touches no page for its canary alone).
  EXPECT_EQ(above.bottom, below.top());
  EXPECT_EQ(page_of(above.bottom), page_of(below.top() - 1));
  EXPECT_EQ(page_of(above.bottom), page_of(above.bottom + 63));
  // Each top ends a canary line below a page boundary: a stack of depth d touches the pages of d
  // bytes, not one more when its top would sit just past a boundary.
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ((reinterpret_cast<std::uintptr_t>(below.top()) + 64) % page, 0u);
  EXPECT_EQ((reinterpret_cast<std::uintptr_t>(above.top()) + 64) % page, 0u);
  EXPECT_EQ(below.size, std::size_t{64 * 1024}) << "the size asked for, its canary line included";
  EXPECT_TRUE(stacks.intact(below));
  EXPECT_TRUE(stacks.intact(above));
  // A rank that ran past the bottom of the stack above wrote over its canary.
  above.bottom[17] = std::byte{0x5a};
  EXPECT_FALSE(stacks.intact(above));
  EXPECT_TRUE(stacks.intact(below));
  // A stack taken again gets a fresh canary.
  stacks.give_back(above);
  const auto again = stacks.take();
  EXPECT_EQ(again.bottom, above.bottom);
  EXPECT_TRUE(stacks.intact(again));
  stacks.give_back(again);
  stacks.give_back(below);
}

}  // namespace
