// Mismatched p2p on mpi (mpirun -n 2 and -n 3): a recv whose element count or dtype differs from
// the send's raises InvalidArgument on the receiver naming both sides and leaves its buffer
// unchanged; the sender completes; the next message on the same tag still arrives intact.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dist/dist.hpp"

namespace {

int world() { return dist::get_world_size(); }
int rank() { return dist::get_rank(); }

template <class S, class R>
void expect_p2p_mismatch(std::size_t sent, std::size_t wanted) {
  if (world() < 2) GTEST_SKIP() << "needs 2 ranks";
  if (rank() == 0) {
    std::vector<S> out(sent, S{1});
    EXPECT_NO_THROW(dist::send(out, 1, 5));
    std::vector<std::int64_t> next{42};
    dist::send(next, 1, 5);
  } else if (rank() == 1) {
    std::vector<R> in(wanted, R{7});
    try {
      dist::recv(in, 0, 5);
      ADD_FAILURE() << "a recv of " << wanted << " elements matched a send of " << sent;
    } catch (const dist::InvalidArgument& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("(rank 0) sends " + std::to_string(sent) + " " +
                       std::string(dist::to_string(dist::dtype_v<S>))),
                std::string::npos)
          << m;
      EXPECT_NE(m.find("(rank 1) expects " + std::to_string(wanted) + " " +
                       std::string(dist::to_string(dist::dtype_v<R>))),
                std::string::npos)
          << m;
    }
    EXPECT_EQ(in, std::vector<R>(wanted, R{7})) << "the receive buffer was written";
    std::vector<std::int64_t> next{0};
    dist::recv(next, 0, 5);
    EXPECT_EQ(next[0], 42);
  }
  dist::barrier();
}

TEST(MpiMismatch, SendFewerThanTheRecvIsAnErrorNamingBothSides) {
  expect_p2p_mismatch<float, float>(4, 8);
}

TEST(MpiMismatch, SendMoreThanTheRecvIsAnErrorNamingBothSides) {
  expect_p2p_mismatch<float, float>(8, 4);
}

TEST(MpiMismatch, SendAndRecvOfDifferentDtypesIsAnError) {
  expect_p2p_mismatch<float, std::int32_t>(4, 4);
}

}  // namespace
