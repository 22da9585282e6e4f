// Mismatched calls on gloo: a collective whose ranks pass different counts or dtypes reaches the
// callers as a DesyncError (after the timeout), not an abort of the process or garbage; a send and
// recv that disagree on count or dtype are an InvalidArgument naming both sides on both ranks.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "real/gloo/tests/gloo_test_util.hpp"
#include "real/world.hpp"
#include "testing/errors.hpp"

namespace {

using namespace gloo_test;

using test_support::message_of;

// Rank 0 sends `sent` elements of S to rank 1, which receives `expected` elements of R; then the
// two exchange a correct message on the same tag. In a child process (EXPECT_EXIT): exits 0 when
// both ranks raised an InvalidArgument containing `both_sides` and the next message arrived
// intact, 3 otherwise (an abort of gloo's transport fails the test without killing the suite).
template <class S, class R>
void mismatched_p2p(std::size_t sent, std::size_t expected, const std::string& both_sides) {
  std::string messages[2];
  bool next_ok[2] = {false, false};
  const auto errors = dist::real::run_thread_world(dist::Backend::gloo, 2, 20s, [&](int rank) {
    try {
      if (rank == 0) {
        std::vector<S> v(sent, S{1});
        dist::send(std::span<const S>(v), 1, 7);
      } else {
        std::vector<R> v(expected, R{2});
        dist::recv(std::span<R>(v), 0, 7);
      }
    } catch (const dist::InvalidArgument& e) {
      messages[rank] = e.what();
    }
    std::vector<std::int64_t> next{rank == 0 ? 41 : 0, 42};
    if (rank == 0) dist::send(std::span<const std::int64_t>(next), 1, 7);
    else dist::recv(std::span<std::int64_t>(next), 0, 7);
    next_ok[rank] = next[0] == 41 && next[1] == 42;
  });
  bool ok = !errors[0] && !errors[1];
  for (int r = 0; r < 2; ++r) {
    std::fprintf(stderr, "rank %d: %s%s\n", r, messages[r].c_str(),
                 errors[r] ? message_of(errors[r]).c_str() : "");
    ok = ok && next_ok[r] && messages[r].find(both_sides) != std::string::npos;
  }
  std::_Exit(ok ? 0 : 3);
}

TEST(GlooMismatchDeathTest, SendOfFewerElementsThanTheRecvIsAnErrorOnBothRanks) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT((mismatched_p2p<float, float>(4, 8,
                                            "the sender (rank 0) sends 4 float32 element(s), "
                                            "the receiver (rank 1) expects 8 float32")),
              ::testing::ExitedWithCode(0), "rank 1: gloo recv from rank 0 \\(tag 7\\)");
}

TEST(GlooMismatchDeathTest, SendOfMoreElementsThanTheRecvIsAnErrorNotAnAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT((mismatched_p2p<float, float>(8, 4,
                                            "sends 8 float32 element(s), the receiver "
                                            "(rank 1) expects 4 float32")),
              ::testing::ExitedWithCode(0), "rank 0: gloo send to rank 1 \\(tag 7\\)");
}

TEST(GlooMismatchDeathTest, SendAndRecvOfDifferentDtypesIsAnError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT((mismatched_p2p<float, std::int32_t>(
                  16, 16, "sends 16 float32 element(s), the receiver (rank 1) expects 16 int32")),
              ::testing::ExitedWithCode(0), "");
}

// Messages of several pieces (p2p_pieces.hpp): the sender's extra pieces are never posted by the
// receiver, and the receiver's last piece is larger than what it keeps (9 MiB against 3 MiB).
TEST(GlooMismatchDeathTest, LargeMessagesOfDifferentSizesAreAnErrorNotAnAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::size_t mib = std::size_t{1} << 18;  // floats
  EXPECT_EXIT((mismatched_p2p<float, float>(9 * mib + 3, 3 * mib,
                                            "sends 2359299 float32 element(s), the receiver (rank "
                                            "1) expects 786432 float32")),
              ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT((mismatched_p2p<float, float>(3 * mib, 9 * mib + 3,
                                            "sends 786432 float32 element(s), the receiver (rank "
                                            "1) expects 2359299 float32")),
              ::testing::ExitedWithCode(0), "");
}

// Runs a 2-rank world in which rank 0 all_reduces `a` and rank 1 `b`; exits 0 when both ranks got
// an error (printed when it is a DesyncError), 3 when one returned normally. In a child process
// (EXPECT_EXIT), so an abort fails the test instead of killing the suite.
template <class A, class B>
void mismatched_all_reduce(std::size_t a_count, std::size_t b_count) {
  const auto errors = dist::real::run_thread_world(dist::Backend::gloo, 2, 1500ms, [&](int rank) {
    try {
      if (rank == 0) {
        std::vector<A> v(a_count, A{1});
        dist::all_reduce(v);
      } else {
        std::vector<B> v(b_count, B{1});
        dist::all_reduce(v);
      }
    } catch (const dist::DesyncError& e) {
      std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
      throw;
    }
  });
  std::_Exit(errors[0] && errors[1] ? 0 : 3);
}

TEST(GlooMismatchDeathTest, AllReduceOfDifferentCountsIsAnErrorNotAnAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The two calls post different gloo slots and time out; the call layer's roll call compares
  // them and both ranks raise the same DesyncError.
  EXPECT_EXIT((mismatched_all_reduce<float, float>(4, 4096)), ::testing::ExitedWithCode(0),
              "rank [01]: collective on world #1: ranks disagree on 'count'");
}

TEST(GlooMismatchDeathTest, AllReduceOfDifferentDtypesIsAnErrorNotGarbage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT((mismatched_all_reduce<float, std::int32_t>(8, 8)), ::testing::ExitedWithCode(0),
              "rank [01]: collective on world #1: ranks disagree on 'dtype'");
}

}  // namespace
