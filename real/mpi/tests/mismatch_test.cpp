// Mismatched p2p on mpi (mpirun -n 2 and -n 3): a recv whose element count or dtype differs from
// the send's raises InvalidArgument on the receiver, and the send raises it on the sender, both
// naming both ranks with what each posted; the receiver's buffer is left unchanged, and the next
// message on the same tag still arrives intact.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "real/mpi/tests/ranks.hpp"

namespace {

using mpi_test::rank;
using mpi_test::world;

// Whether `message` names rank 0 sending `sent` S and rank 1 expecting `wanted` R.
template <class S, class R>
void expect_both_sides(const std::string& message, std::size_t sent, std::size_t wanted) {
  EXPECT_NE(message.find("(rank 0) sends " + std::to_string(sent) + " " +
                         std::string(dist::to_string(dist::dtype_v<S>))),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("(rank 1) expects " + std::to_string(wanted) + " " +
                         std::string(dist::to_string(dist::dtype_v<R>))),
            std::string::npos)
      << message;
}

template <class S, class R>
void expect_p2p_mismatch(std::size_t sent, std::size_t wanted) {
  if (world() < 2) GTEST_SKIP() << "needs 2 ranks";
  if (rank() == 0) {
    std::vector<S> out(sent, S{1});
    try {
      dist::send(out, 1, 5);
      ADD_FAILURE() << "a send of " << sent << " elements matched a recv of " << wanted;
    } catch (const dist::InvalidArgument& e) {
      expect_both_sides<S, R>(e.what(), sent, wanted);
    }
    std::vector<std::int64_t> next{42};
    dist::send(next, 1, 5);
    dist::recv(next, 1, 5);
    EXPECT_EQ(next[0], 43);
  } else if (rank() == 1) {
    std::vector<R> in(wanted, R{7});
    try {
      dist::recv(in, 0, 5);
      ADD_FAILURE() << "a recv of " << wanted << " elements matched a send of " << sent;
    } catch (const dist::InvalidArgument& e) {
      expect_both_sides<S, R>(e.what(), sent, wanted);
    }
    EXPECT_EQ(in, std::vector<R>(wanted, R{7})) << "the receive buffer was written";
    std::vector<std::int64_t> next{0};
    dist::recv(next, 0, 5);
    EXPECT_EQ(next[0], 42);
    next[0] = 43;
    dist::send(next, 0, 5);
  }
  dist::barrier();
}

TEST(MpiMismatch, SendFewerThanTheRecvIsAnErrorOnBothRanksNamingBothSides) {
  expect_p2p_mismatch<float, float>(4, 8);
}

TEST(MpiMismatch, SendMoreThanTheRecvIsAnErrorOnBothRanksNamingBothSides) {
  expect_p2p_mismatch<float, float>(8, 4);
}

TEST(MpiMismatch, SendAndRecvOfDifferentDtypesIsAnErrorOnBothRanks) {
  expect_p2p_mismatch<float, std::int32_t>(4, 4);
}

// isend and irecv posted before either waits: the error comes from wait() on both ranks.
TEST(MpiMismatch, NonBlockingSendAndRecvRaiseFromWaitOnBothRanks) {
  if (world() < 2) GTEST_SKIP() << "needs 2 ranks";
  if (rank() > 1) {
    dist::barrier();
    return;
  }
  std::vector<float> out(3, 1.0F);
  std::vector<float> in(rank() == 0 ? 5 : 3, 7.0F);
  const int peer = 1 - rank();
  // Both send 3; rank 0 expects 5, rank 1 expects 3: only rank 1's send and rank 0's recv fail.
  auto sent = dist::isend(std::span<const float>(out), peer, 6);
  auto got = dist::irecv(std::span<float>(in), peer, 6);
  if (rank() == 0) {
    EXPECT_NO_THROW(sent.wait());
    try {
      got.wait();
      ADD_FAILURE() << "a recv of 5 elements matched a send of 3";
    } catch (const dist::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("(rank 1) sends 3 float32"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("(rank 0) expects 5 float32"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(in, std::vector<float>(5, 7.0F));
  } else {
    EXPECT_NO_THROW(got.wait());
    EXPECT_EQ(in, out);
    try {
      sent.wait();
      ADD_FAILURE() << "a send of 3 elements matched a recv of 5";
    } catch (const dist::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("(rank 1) sends 3 float32"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("(rank 0) expects 5 float32"), std::string::npos)
          << e.what();
    }
  }
  dist::barrier();
}

// An uneven all_to_all whose splits disagree (rank 0 sends rank 1 two elements, rank 1 expects
// one): MPI_Ialltoallv truncates on the receiver, which raises DesyncError naming the call (MPI
// does not say which rank sent too much, nor tell the sender); never an abort of the job.
TEST(MpiZMismatch, AnUnevenAllToAllWhoseSplitsDisagreeIsAnError) {
  if (world() != 2) GTEST_SKIP() << "needs exactly 2 ranks";
  const std::vector<std::int64_t> in_splits =
      rank() == 0 ? std::vector<std::int64_t>{1, 2} : std::vector<std::int64_t>{1, 1};
  const std::vector<std::int64_t> out_splits{1, 1};
  std::vector<float> input(rank() == 0 ? 3 : 2), output(2);
  std::string error;
  try {
    dist::all_to_all(std::span<float>(output), std::span<const float>(input), out_splits,
                     in_splits);
  } catch (const dist::Error& e) {
    error = std::string(to_string(e.code())) + ": " + e.what();
  }
  if (rank() == 1) {
    EXPECT_EQ(error.rfind("desync: all_to_all with splits: a rank sends group rank 1 more elements "
                          "than its output_splits expect from it",
                          0),
              0u)
        << error;
  }
}

}  // namespace
