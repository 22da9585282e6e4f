// The misuse property (testing/misuse.hpp) on sim: worlds of 2 to 4 ranks, both schedules, each
// case a run of its own; under ASan in ci/sanitize, where a buffer a peer touched after its rank
// left would be a heap-use-after-free.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>

#include "dist/sim.hpp"
#include "sim/tests/sim_test_util.hpp"
#include "testing/misuse.hpp"

namespace {

namespace misuse = test_support::misuse;

TEST(MisuseProperty, NoMisusedCallCorruptsMemoryHangsOrReturnsAWrongResult) {
  const std::uint64_t seed = misuse::seed();
  SCOPED_TRACE("DIST_MISUSE_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  constexpr auto timeout = std::chrono::seconds(2);
  for (int i = 0; i < 60; ++i) {
    const int n = 2 + static_cast<int>(rng() % 3);
    const misuse::Case c = misuse::draw(rng, n);
    auto cluster = sim_test::world(n);
    cluster.timeout = timeout;
    cluster.schedule =
        rng() % 2 ? dist::sim::Schedule::deterministic : dist::sim::Schedule::concurrent;
    cluster.seed = rng();
    const auto outcomes = dist::sim::run(cluster, [&] { return misuse::run(c); });
    const std::string failed = misuse::verdict(c, outcomes, timeout);
    ASSERT_EQ(failed, "") << "case " << i << " on " << n << " ranks";
  }
}

}  // namespace
