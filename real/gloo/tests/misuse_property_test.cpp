// The misuse property (testing/misuse.hpp) on gloo: worlds of 2 and 3 ranks (threads), each case
// a world of its own with a 1 s timeout, so a mismatch gloo meets only at its timeout is named by
// the roll call within the property's bound; under ASan in ci/sanitize.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "real/testing.hpp"
#include "testing/errors.hpp"
#include "testing/misuse.hpp"

namespace {

namespace misuse = test_support::misuse;

TEST(MisuseProperty, NoMisusedCallCorruptsMemoryHangsOrReturnsAWrongResult) {
  const std::uint64_t seed = misuse::seed();
  SCOPED_TRACE("DIST_MISUSE_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  constexpr auto timeout = std::chrono::seconds(1);
  for (int i = 0; i < 10; ++i) {
    const int n = 2 + static_cast<int>(rng() % 2);
    const misuse::Case c = misuse::draw(rng, n);
    std::vector<misuse::Outcome> outcomes(static_cast<std::size_t>(n));
    const auto errors = dist::real::run_thread_world(
        dist::Backend::gloo, n, timeout,
        [&](int rank) { outcomes[static_cast<std::size_t>(rank)] = misuse::run(c); });
    for (std::size_t r = 0; r < errors.size(); ++r)
      ASSERT_FALSE(errors[r]) << c.text() << ": rank " << r << " failed to leave its world: "
                              << test_support::message_of(errors[r]);
    ASSERT_EQ(misuse::verdict(c, outcomes, timeout), "") << "case " << i << " on " << n << " ranks";
  }
}

}  // namespace
