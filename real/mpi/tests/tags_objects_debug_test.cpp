// What only mpi has, on this run's world (mpirun -n 2 and -n 3): MPI's tag limit, the object
// helpers over mpi, and DIST_DEBUG=detail's checks. Its collectives, p2p and groups are checked by
// the conformance suite (conformance_mpi.cpp).
#include <gtest/gtest.h>
#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "real/mpi/tests/ranks.hpp"

namespace {

using mpi_test::rank;
using mpi_test::world;

TEST(MpiP2P, TheLargestTagRoundTripsAndALargerOneIsRefused) {
  if (world() < 2) GTEST_SKIP() << "needs 2 ranks";
  int* upper = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upper, &found);
  ASSERT_TRUE(found && upper);
  const int limit = *upper;
  std::vector<int> out{rank()};
  std::vector<int> in{-1};
  auto sent = dist::isend(std::span(out), (rank() + 1) % world(), limit);
  dist::recv(in, (rank() + world() - 1) % world(), limit);
  sent.wait();
  EXPECT_EQ(in[0], (rank() + world() - 1) % world());
  if (limit < INT_MAX) {
    EXPECT_THROW(dist::send(out, (rank() + 1) % world(), limit + 1), dist::InvalidArgument);
  }
}

TEST(MpiObjects, ObjectHelpersMoveVariableSizes) {
  const std::string mine(static_cast<std::size_t>(rank()) * 3 + 1, static_cast<char>('a' + rank()));
  const auto all = dist::all_gather_object(mine);
  ASSERT_EQ(static_cast<int>(all.size()), world());
  for (int r = 0; r < world(); ++r)
    EXPECT_EQ(all[static_cast<std::size_t>(r)],
              std::string(static_cast<std::size_t>(r) * 3 + 1, static_cast<char>('a' + r)));

  std::vector<std::map<std::string, int>> list(2);
  if (rank() == world() - 1) list = {{{"x", 1}}, {{"y", 2}, {"z", 3}}};
  dist::broadcast_object_list(list, world() - 1);
  EXPECT_EQ(list[1].at("z"), 3);

  const std::vector<int> part{rank() * 10, rank() * 10 + 1};
  for (const char* device : {"cpu", "gpu"}) {
    const auto results = dist::collect_results(part, 2L * world() - 1, device);
    if (rank() != 0) {
      EXPECT_FALSE(results.has_value());
      continue;
    }
    ASSERT_TRUE(results.has_value());
    std::vector<int> expected;  // round-robin over the ranks, cut to the size
    for (int i = 0; i < 2; ++i)
      for (int r = 0; r < world(); ++r) expected.push_back(r * 10 + i);
    expected.pop_back();
    EXPECT_EQ(*results, expected) << device;
  }
}

TEST(MpiDebug, DetailModeTurnsAMismatchedCollectiveIntoDesyncErrorOnEveryRank) {
  if (world() < 2) GTEST_SKIP() << "needs 2 ranks";
  ::setenv("DIST_DEBUG", "detail", 1);
  std::vector<int> everyone(static_cast<std::size_t>(world()));
  for (int r = 0; r < world(); ++r) everyone[static_cast<std::size_t>(r)] = r;
  const dist::Group checked = dist::new_group(everyone);  // its backend reads DIST_DEBUG now
  ::unsetenv("DIST_DEBUG");
  std::vector<float> v(rank() == 0 ? 4 : 5, 1.0F);  // rank 0 disagrees on the count
  try {
    dist::all_reduce(v, dist::ReduceOp::sum, checked);
    ADD_FAILURE() << "a mismatched all_reduce passed";
  } catch (const dist::DesyncError& e) {
    EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
  }
  std::vector<float> same(3, 1.0F);
  dist::all_reduce(same, dist::ReduceOp::sum, checked);  // the group stays usable
  EXPECT_EQ(same[0], static_cast<float>(world()));
}

}  // namespace
