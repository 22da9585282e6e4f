// The mpi backend's checks that need no mpirun: a process that is not where the rendezvous puts
// it (here an MPI singleton told it is one of two ranks) is told to use mpirun, without waiting
// for the rank that will never come; an oversized count is refused before MPI sees it.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "real/mpi/mapping.hpp"

namespace {

TEST(MpiInit, AProcessOutsideMpirunIsToldToUseIt) {
  try {
    dist::init_process_group(dist::Backend::mpi, "tcp://127.0.0.1:29617", 0, 2,
                             std::chrono::seconds(20));
    dist::destroy_dist();
    FAIL() << "joined a world of 2 as an MPI singleton";
  } catch (const dist::BackendError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("rank 0 of 1"), std::string::npos) << text;
    EXPECT_NE(text.find("mpirun"), std::string::npos) << text;
  }
  EXPECT_FALSE(dist::is_distributed());
}

TEST(MpiMapping, CountsAboveIntMaxAreRefusedNamingTheOperation) {
  EXPECT_EQ(dist::real::mpi_count(7, "all_reduce #1"), 7);
  try {
    (void)dist::real::mpi_count(static_cast<std::size_t>(INT_MAX) + 1, "all_reduce #1");
    FAIL() << "no error";
  } catch (const dist::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("all_reduce #1"), std::string::npos) << e.what();
  }
}

TEST(MpiMapping, HalvesTravelAsSixteenBitWords) {
  EXPECT_EQ(dist::real::mpi_datatype(dist::DType::float16), MPI_UINT16_T);
  EXPECT_EQ(dist::real::mpi_datatype(dist::DType::bfloat16), MPI_UINT16_T);
  EXPECT_EQ(dist::real::mpi_datatype(dist::DType::float64), MPI_DOUBLE);
}

}  // namespace
