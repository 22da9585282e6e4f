// Mismatched calls on mpi (mpirun -n 2 and -n 3). p2p: a recv whose element count or dtype
// differs from the send's raises InvalidArgument on the receiver, and the send raises it on the
// sender, both naming both ranks with what each posted; the receiver's buffer is left unchanged,
// and the next message on the same tag still arrives intact. Collectives: below.
#include <gtest/gtest.h>

#include <chrono>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "real/mpi/tests/ranks.hpp"

namespace {

using mpi_test::fresh_world;
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

// Collectives that disagree (mpirun -n 2 and -n 3): the ranks agree on every call before MPI
// moves its data (real/mpi/sequence.hpp), so a mismatch is the same DesyncError on every rank,
// naming every rank's call; no buffer is written, and the group goes on. Without the agreement,
// Open MPI corrupted the heap on 1,000 against 300,000 elements, and calls of the same size
// returned garbage as if they had succeeded.

// Runs `call(rank)` on every rank, which must raise a DesyncError whose text contains each of
// `parts`, at once; then the ranks join a fresh world and compare their errors there.
template <class Call>
void expect_desync_everywhere(Call call, const std::vector<std::string>& parts) {
  if (world() < 2) GTEST_SKIP() << "needs 2 ranks";
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  try {
    call(rank());
    ADD_FAILURE() << "the mismatched call returned on rank " << rank();
  } catch (const dist::DesyncError& e) {
    error = e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  for (const std::string& part : parts)
    EXPECT_NE(error.find(part), std::string::npos) << "rank " << rank() << ": " << error;
  fresh_world();
  const auto all = dist::all_gather_object(error);
  for (const std::string& other : all) EXPECT_EQ(other, all.front());
}

TEST(MpiCollectiveMismatch, SizesThatDifferAreADesyncErrorAndNoBufferIsWritten) {
  for (const auto& [mine, theirs] : {std::pair<std::size_t, std::size_t>{1000, 300000}, {4, 5}}) {
    std::vector<float> v;
    expect_desync_everywhere(
        [&](int r) {
      v.assign(r == 0 ? mine : theirs, 2.0F);
      dist::all_reduce(v);
        },
        {"ranks disagree on 'count'",
         "rank 0 called all_reduce(op=sum, float32 x " + std::to_string(mine) + ")",
         "rank 1 called all_reduce(op=sum, float32 x " + std::to_string(theirs) + ")"});
    EXPECT_EQ(v, std::vector<float>(rank() == 0 ? mine : theirs, 2.0F));
  }
}

TEST(MpiCollectiveMismatch, CallsOfTheSameSizeThatDifferInDtypeRootOrKindAreADesyncError) {
  expect_desync_everywhere(
      [](int r) {
    if (r == 0) {
      std::vector<float> v(4, 1.0F);
      dist::all_reduce(v);
    } else {
      std::vector<std::int32_t> v(4, 1);
      dist::all_reduce(v);
    }
      },
      {"ranks disagree on 'dtype'", "rank 0 called all_reduce(op=sum, float32 x 4)"});
  expect_desync_everywhere(
      [](int r) {
    std::vector<float> v(4, static_cast<float>(r));
    dist::broadcast(v, r == 0 ? 0 : 1);
      },
      {"ranks disagree on", "rank 0 called broadcast("});
  expect_desync_everywhere(
      [](int r) {
    std::vector<float> v(4, 1.0F);
    if (r == 0) dist::barrier();
    else dist::all_reduce(v, dist::ReduceOp::max);
      },
      {"ranks disagree on 'kind'", "rank 0 called barrier"});
}

// An uneven all_to_all whose splits disagree: the ranks exchange their splits first, so both
// "fewer than expected" (which MPI completes silently) and "more" (MPI_ERR_TRUNCATE on the
// receiver alone) are a DesyncError on every rank naming the sender, the receiver and both sizes.
TEST(MpiCollectiveMismatch, AnUnevenAllToAllWhoseSplitsDisagreeIsADesyncErrorOnEveryRank) {
  for (const auto& [sent, expected] : {std::pair<std::int64_t, std::int64_t>{1, 2}, {3000, 1000}}) {
    std::vector<float> output;
    expect_desync_everywhere(
        [&](int r) {
      std::vector<std::int64_t> in_splits(static_cast<std::size_t>(world()), 1);
      std::vector<std::int64_t> out_splits(static_cast<std::size_t>(world()), 1);
      if (r == 0) in_splits[1] = sent;
      if (r == 1) out_splits[0] = expected;
      std::vector<float> input(static_cast<std::size_t>(world() - 1 + (r == 0 ? sent : 1)));
      output.assign(static_cast<std::size_t>(world() - 1 + (r == 1 ? expected : 1)), 5.0F);
      dist::all_to_all(std::span<float>(output), std::span<const float>(input), out_splits,
                       in_splits);
        },
        {"ranks disagree on the all_to_all splits", "rank 0 sends rank 1 " + std::to_string(sent) +
                                                        " element(s), where rank 1's output_splits "
                                                        "expect " +
                                                        std::to_string(expected)});
    EXPECT_EQ(output, std::vector<float>(output.size(), 5.0F));
  }
}

}  // namespace
