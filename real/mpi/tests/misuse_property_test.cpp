// The misuse property (testing/misuse.hpp) on mpi (mpirun -n 2 and -n 3): the ranks draw the same
// cases from rank 0's seed; after each, a barrier carries along a call left in flight, the ranks
// join a fresh world (a mismatch ends the old one) and compare their outcomes there. Under ASan in
// ci/sanitize, where Open MPI writing past a buffer sized for another rank's count would show.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "real/mpi/tests/ranks.hpp"
#include "testing/misuse.hpp"

namespace {

namespace misuse = test_support::misuse;
using mpi_test::world;

TEST(MpiMisuseProperty, NoMisusedCallCorruptsMemoryHangsOrReturnsAWrongResult) {
  if (world() < 2) GTEST_SKIP() << "needs 2 ranks";
  std::vector<std::uint64_t> seed{misuse::seed()};
  dist::broadcast(seed, 0);
  const auto timeout = std::chrono::seconds(60);  // mpi_test_main's; no case waits for it
  misuse::check(seed[0], 24, world(), world(), timeout,
                [](int, const misuse::Case& c, std::mt19937_64&) {
    const misuse::Outcome mine = misuse::run(c);
    try {
      dist::barrier();
    } catch (const dist::Error&) {  // the world a mismatch ended
    }
    mpi_test::fresh_world();
    std::vector<misuse::Outcome> outcomes;
    for (const std::string& text : dist::all_gather_object(misuse::encode(mine)))
      outcomes.push_back(misuse::decode(text));
    return outcomes;
  });
}

}  // namespace
