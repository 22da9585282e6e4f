// The misuse property (testing/misuse.hpp) on sim: worlds of 2 to 4 ranks, both schedules, each
// case a run of its own; under ASan in ci/sanitize, where a buffer a peer touched after its rank
// left would be a heap-use-after-free.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"
#include "testing/misuse.hpp"

namespace {

namespace misuse = test_support::misuse;

TEST(MisuseProperty, NoMisusedCallCorruptsMemoryHangsOrReturnsAWrongResult) {
  constexpr auto timeout = std::chrono::seconds(2);
  misuse::check(misuse::seed(), 60, 2, 4, timeout,
                [&](int n, const misuse::Case& c, std::mt19937_64& rng) {
    auto cluster = sim_test::world(n);
    cluster.timeout = timeout;
    cluster.schedule =
        rng() % 2 ? dist::sim::Schedule::deterministic : dist::sim::Schedule::concurrent;
    cluster.seed = rng();
    return dist::sim::run(cluster, [&] { return misuse::run(c); });
  });
}

}  // namespace
