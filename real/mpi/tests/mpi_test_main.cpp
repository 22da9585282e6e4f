// The main of the mpi test binaries, which mpirun starts once per rank: every process joins the
// world through init_dist("mpi", Backend::mpi) (MASTER_ADDR/MASTER_PORT from the ctest command),
// runs the same tests in the same order, and the run fails on every rank if it fails on one.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "dist/dist.hpp"
#include "dist/real/init.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* timeout = std::getenv("DIST_MPI_TEST_TIMEOUT_MS");
  dist::InitOptions options;
  options.timeout = std::chrono::milliseconds(timeout ? std::stol(timeout) : 60000);
  try {
    dist::init_dist("mpi", dist::Backend::mpi, options);
  } catch (const std::exception& e) {
    std::cerr << "mpi tests: init_dist(\"mpi\", Backend::mpi) failed: " << e.what() << "\n";
    return 1;
  }
  int failed = RUN_ALL_TESTS() == 0 ? 0 : 1;
  if (dist::is_distributed()) {
    try {
      std::vector<int> any{failed};
      dist::all_reduce(any, dist::ReduceOp::max);
      failed = any[0];
    } catch (const std::exception& e) {  // the world was left unusable by a test: keep our verdict
      std::cerr << "mpi tests (rank " << dist::get_rank() << "): final check skipped: " << e.what() << "\n";
    }
    dist::destroy_dist();
  }
  return failed;
}
