// The mpi backend's failure paths (run with a 3 s timeout, mpirun -n 3): a rank that arrives
// late is named in the TimeoutError of the others, who leave the group unusable rather than
// reuse it; the late rank's own call completes when it arrives, as MPI matches it then.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "dist/dist.hpp"

namespace {

using namespace std::chrono_literals;

TEST(MpiFailure, ALateRankIsNamedByTheOthersAndTheGroupIsRetired) {
  const int world = dist::get_world_size();
  if (world < 2) GTEST_SKIP() << "needs 2 ranks";
  std::vector<int> everyone(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) everyone[static_cast<std::size_t>(r)] = r;
  const dist::Group group = dist::new_group(everyone);
  const int late = world - 1;
  std::vector<std::int64_t> v{dist::get_rank()};
  if (dist::get_rank() == late) {
    std::this_thread::sleep_for(4500ms);  // past the others' 3 s timeout
    dist::all_reduce(v, dist::ReduceOp::sum, group);  // matched by the others' given-up calls
    EXPECT_EQ(v[0], static_cast<std::int64_t>(world) * (world - 1) / 2);
  } else {
    const auto start = std::chrono::steady_clock::now();
    try {
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      ADD_FAILURE() << "all_reduce returned without rank " << late;
    } catch (const dist::TimeoutError& e) {
      EXPECT_EQ(e.missing_ranks(), std::vector<int>{late}) << e.what();
      EXPECT_NE(std::string(e.what()).find("all_reduce #1"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
    try {
      dist::barrier(group);
      ADD_FAILURE() << "the group was reused after its timeout";
    } catch (const dist::BackendError& e) {
      EXPECT_NE(std::string(e.what()).find("unusable"), std::string::npos) << e.what();
    }
  }
  dist::barrier();  // the world group is unaffected
}

}  // namespace
