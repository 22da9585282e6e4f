// The misuse property (testing/misuse.hpp) on gloo: worlds of 2 and 3 ranks (threads), each case
// a world of its own with a 1 s timeout, so a mismatch gloo meets only at its timeout is named by
// the roll call within the property's bound; under ASan in ci/sanitize.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <vector>

#include "real/testing.hpp"
#include "testing/errors.hpp"
#include "testing/misuse.hpp"

namespace {

namespace misuse = test_support::misuse;

TEST(MisuseProperty, NoMisusedCallCorruptsMemoryHangsOrReturnsAWrongResult) {
  constexpr auto timeout = std::chrono::seconds(1);
  misuse::check(misuse::seed(), 10, 2, 3, timeout,
                [&](int n, const misuse::Case& c, std::mt19937_64&) {
    std::vector<misuse::Outcome> outcomes(static_cast<std::size_t>(n));
    const auto errors = dist::real::run_thread_world(
        dist::Backend::gloo, n, timeout,
        [&](int rank) { outcomes[static_cast<std::size_t>(rank)] = misuse::run(c); });
    for (std::size_t r = 0; r < errors.size(); ++r)
      EXPECT_FALSE(errors[r]) << c.text() << ": rank " << r << " failed to leave its world: "
                              << test_support::message_of(errors[r]);
    return outcomes;
  });
}

}  // namespace
