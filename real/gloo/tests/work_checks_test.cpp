// The Work misuse checks of sim on gloo (core/work_ledger.hpp): a Work never waited when its rank
// calls destroy_dist, and, under DIST_DEBUG=detail only, an isend buffer changed before its wait.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>

#include "real/gloo/tests/gloo_test_util.hpp"
#include "testing/errors.hpp"
#include "testing/misused_work.hpp"
#include "testing/processes.hpp"

namespace {

using namespace gloo_test;
using ::testing::HasSubstr;

using test_support::message_of;

TEST(GlooWorkChecks, DestroyDistBeforeAWaitNamesTheCall) {
  const auto errors = dist::real::run_thread_world(dist::Backend::gloo, 2, 20s, [](int rank) {
    std::vector<float> v(3, 1.0F);
    auto work = dist::all_reduce_async(std::span<float>(v));
    // gloo runs the group's calls in order: once a later blocking one returns, this one has
    // completed, and only its wait is missing (a barrier() would wait it).
    std::vector<float> after{1};
    dist::all_reduce(after);
    if (rank == 0) work.wait();
    dist::destroy_dist();
  });
  EXPECT_EQ(message_of(errors[0]), "no error");
  EXPECT_TRUE(test_support::raised<dist::InvalidArgument>(errors[1]));
  EXPECT_THAT(message_of(errors[1]),
              HasSubstr("destroy_dist() was called with 1 Work never waited: "
                        "all_reduce(op=sum, float32 x 3) on world #1"));
}

TEST(GlooWorkChecks, AChangedSendBufferIsNamedUnderDistDebugDetail) {
  const test_support::ScopedEnv detail("DIST_DEBUG", "detail");
  const auto errors = dist::real::run_thread_world(
      dist::Backend::gloo, 2, 20s, [](int) { test_support::change_isend_buffer_before_wait(); });
  EXPECT_TRUE(test_support::raised<dist::InvalidArgument>(errors[0]));
  EXPECT_THAT(message_of(errors[0]),
              HasSubstr("send(dst=1, tag=0, int32 x 4) on world: its buffer "
                        "changed between the isend and the end of its wait()"));
  EXPECT_EQ(message_of(errors[1]), "no error");
}

TEST(GlooWorkChecks, AChangedSendBufferIsNotCheckedWithoutDistDebug) {
  const test_support::ScopedEnv off("DIST_DEBUG", std::nullopt);
  const auto errors = dist::real::run_thread_world(
      dist::Backend::gloo, 2, 20s, [](int) { test_support::change_isend_buffer_before_wait(); });
  EXPECT_EQ(message_of(errors[0]), "no error");
  EXPECT_EQ(message_of(errors[1]), "no error");
}

}  // namespace
