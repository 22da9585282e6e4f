// Mismatched sizes on gloo: p2p whose sides disagree on the element count or dtype raises
// InvalidArgument naming both sides on both ranks (never a partial receive or an abort), and a
// collective whose ranks pass different counts reaches the callers as an error, not an abort.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "real/gloo/tests/gloo_test_util.hpp"
#include "real/world.hpp"

namespace {

using namespace gloo_test;

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

// Rank 0 sends `sent` elements of S, rank 1 receives `wanted` elements of R; both must fail with
// InvalidArgument naming both sides, and a matched message on the same tag must still go through.
template <class S, class R>
void expect_p2p_mismatch(std::size_t sent, std::size_t wanted) {
  std::vector<std::int64_t> after(2, -1);
  const auto errors = dist::real::run_thread_world(dist::Backend::gloo, 2, 10s, [&](int rank) {
    std::exception_ptr error;
    try {
      if (rank == 0) {
        std::vector<S> out(sent, S{1});
        dist::send(out, 1, 3);
      } else {
        std::vector<R> in(wanted, R{7});
        dist::recv(in, 0, 3);
      }
    } catch (const dist::InvalidArgument&) {
      error = std::current_exception();
    }
    std::vector<std::int64_t> v{rank == 0 ? 42 : 0};
    if (rank == 0) dist::send(v, 1, 3);
    else dist::recv(v, 0, 3);
    after[static_cast<std::size_t>(rank)] = v[0];
    if (error) std::rethrow_exception(error);
  });
  for (int rank = 0; rank < 2; ++rank) {
    const auto& e = errors[static_cast<std::size_t>(rank)];
    ASSERT_TRUE(e) << "rank " << rank << " saw no error";
    const std::string m = message_of(e);
    EXPECT_NE(m.find("rank 0) sends " + std::to_string(sent) + " " +
                     std::string(dist::to_string(dist::dtype_v<S>))),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("rank 1) expects " + std::to_string(wanted) + " " +
                     std::string(dist::to_string(dist::dtype_v<R>))),
              std::string::npos)
        << m;
  }
  EXPECT_EQ(after[1], 42) << "the next message on the tag was lost";
}

TEST(GlooMismatch, SendFewerThanTheRecvIsAnErrorOnBothSides) {
  expect_p2p_mismatch<float, float>(4, 8);
}

TEST(GlooMismatch, SendMoreThanTheRecvIsAnErrorOnBothSidesNotAnAbort) {
  expect_p2p_mismatch<float, float>(8, 4);
}

TEST(GlooMismatch, SendAndRecvOfDifferentDtypesIsAnError) {
  expect_p2p_mismatch<float, std::int32_t>(4, 4);
}

// Runs a 2-rank world in which rank 0 all_reduces `a` and rank 1 `b`; exits 0 when both ranks got
// a dist::Error, 3 when one returned normally. In a child process (EXPECT_EXIT), so an abort fails
// the test instead of killing the suite.
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
    } catch (const dist::Error& e) {
      std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
      throw;
    }
  });
  std::_Exit(errors[0] && errors[1] ? 0 : 3);
}

TEST(GlooMismatchDeathTest, AllReduceOfDifferentCountsIsAnErrorNotAnAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Which error each rank gets depends on who gives up first (TimeoutError, or RankFailure
  // once the other has left); what matters is that both get one and the process lives.
  EXPECT_EXIT((mismatched_all_reduce<float, float>(4, 4096)), ::testing::ExitedWithCode(0),
              "rank [01]: gloo all_reduce #1");
}

TEST(GlooMismatchDeathTest, AllReduceOfDifferentDtypesIsAnErrorNotGarbage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT((mismatched_all_reduce<float, std::int32_t>(8, 8)), ::testing::ExitedWithCode(0),
              "disagree on the call");
}

}  // namespace
