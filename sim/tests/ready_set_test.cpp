// The deterministic scheduler's ready set against a plain sorted set: the same members, and the
// k-th ready rank the same, after every change of a random sequence (so seeds replay as before).
#include "sim/ready_set.hpp"

#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <set>

namespace {

TEST(ReadySet, PicksTheKthReadyRankInRankOrderAsASortedSetWould) {
  for (const int n : {1, 2, 7, 64, 1000}) {
    dist::sim::ReadySet ready(n);
    std::set<int> expected;
    std::mt19937 rng(static_cast<unsigned>(n));
    int wrong = 0;
    for (int step = 0; step < 4000; ++step) {
      const int rank = static_cast<int>(rng() % static_cast<unsigned>(n));
      const bool in = rng() % 3 != 0;
      ready.set(rank, in);
      if (in) expected.insert(rank);
      else expected.erase(rank);
      wrong += ready.size() != expected.size() || ready.contains(rank) != in;
      if (expected.empty()) continue;
      const auto k = static_cast<std::size_t>(rng() % expected.size());
      wrong += ready.kth(k) != *std::next(expected.begin(), static_cast<std::ptrdiff_t>(k));
    }
    EXPECT_EQ(wrong, 0) << "world of " << n;
  }
}

}  // namespace
