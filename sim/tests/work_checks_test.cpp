// Misuse of a Work, caught on the rank that made it (core/work_ledger.hpp): a Work never waited
// when its rank returns or calls destroy_dist, and an isend buffer changed before its wait.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"
#include "testing/misused_work.hpp"

namespace {

using dist::sim::Cluster;
using sim_test::failure_of;
using sim_test::world;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(UnwaitedWork, ARankThatReturnsBeforeItsWaitIsNamedWithTheCall) {
  const auto e = failure_of(world(2), [] {
    std::vector<int> v(4, 1);
    auto work = dist::all_reduce_async(std::span<int>(v));
    // Every rank's all_reduce has run: only the wait is missing (a barrier() would wait it).
    dist::monitored_barrier(30s);
    if (dist::get_rank() == 0) work.wait();
  });
  EXPECT_TRUE(e.outcomes()[0].ok()) << e.what();
  ASSERT_TRUE(e.failed_with<dist::InvalidArgument>(1)) << e.what();
  EXPECT_THAT(e.outcomes()[1].message,
              HasSubstr("rank 1 returned with 1 Work never waited: all_reduce(op=sum, int32 x 4) "
                        "on world #1. Call wait() on every Work"));
}

// barrier() completes the group's earlier collectives (their errors raise there): it is their
// wait, as in torch, and the rank may return without its own.
TEST(UnwaitedWork, ABarrierWaitsTheGroupsEarlierCollectives) {
  dist::sim::run(world(2), [] {
    std::vector<int> v(4, 1);
    auto work = dist::all_reduce_async(std::span<int>(v));
    dist::barrier();
    if (v != std::vector<int>(4, 2)) throw std::runtime_error("the all_reduce had not completed");
  });
}

TEST(UnwaitedWork, EveryKindOfAsyncCallIsCounted) {
  const auto e = failure_of(world(2), [] {
    std::vector<float> a(2), out(4), in(2);
    std::vector<float> sent(3, 1.0F), got(3);
    std::vector<dist::Work> works;
    works.push_back(dist::broadcast_async(std::span<float>(a)));
    works.push_back(dist::all_gather_async(std::span<float>(out), std::span<float>(in)));
    works.push_back(dist::barrier_async());
    if (dist::get_rank() == 0) works.push_back(dist::isend(std::span<float>(sent), 1));
    else works.push_back(dist::irecv(std::span<float>(got), 0));
    works.push_back(dist::reduce_async(std::span<float>(a)));
    works.push_back(dist::all_reduce_async(std::span<float>(a)));
    for (std::size_t i = 0; i < 1; ++i) works[i].wait();
    dist::monitored_barrier(30s);
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(e.failed_with<dist::InvalidArgument>(r)) << e.what();
    EXPECT_THAT(
        e.outcomes()[static_cast<std::size_t>(r)].message,
        HasSubstr("returned with 5 Works never waited: all_gather(float32 x 2) on world #2, "
                  "barrier() on world #3, "));
    EXPECT_THAT(e.outcomes()[static_cast<std::size_t>(r)].message, HasSubstr(" and 1 more."));
  }
  EXPECT_THAT(e.outcomes()[0].message, HasSubstr("send(dst=1, tag=0, float32 x 3) on world"));
  EXPECT_THAT(e.outcomes()[1].message, HasSubstr("recv(src=0, tag=0, float32 x 3) on world"));
}

TEST(UnwaitedWork, SeeingItCompleteIsAWaitAndWaitingTwiceIsFine) {
  dist::sim::run(world(2), [] {
    std::vector<int> v(4, 1);
    auto polled = dist::all_reduce_async(std::span<int>(v));
    while (!polled.is_completed()) {
    }
    auto twice = dist::all_reduce_async(std::span<int>(v));
    twice.wait();
    twice.wait();
    EXPECT_EQ(v[0], 4);
  });
}

TEST(UnwaitedWork, DestroyDistNamesTheCall) {
  const auto e = failure_of(world(2), [] {
    std::vector<int> v(1);
    auto work = dist::all_reduce_async(std::span<int>(v));
    if (dist::get_rank() == 1) dist::destroy_dist();
    work.wait();
  });
  ASSERT_TRUE(e.failed_with<dist::InvalidArgument>(1)) << e.what();
  EXPECT_THAT(e.outcomes()[1].message,
              HasSubstr("destroy_dist() was called with 1 Work never waited: all_reduce(op=sum, "
                        "int32 x 1) on world #1"));
}

TEST(UnwaitedWork, ASynchronousCallIsNeverInTheLedger) {
  dist::sim::run(world(2), [] {
    std::vector<int> v(4, dist::get_rank());
    dist::all_reduce(v);
    if (dist::get_rank() == 0) dist::send(v, 1);
    else dist::recv(v, 0);
    dist::destroy_dist();  // nothing pending: no error
  });
}

TEST(ChangedSendBuffer, IsAnErrorNamingTheCallAtItsWait) {
  const auto e = failure_of(world(2), test_support::change_isend_buffer_before_wait);
  ASSERT_TRUE(e.failed_with<dist::InvalidArgument>(0)) << e.what();
  EXPECT_THAT(e.outcomes()[0].message,
              HasSubstr("send(dst=1, tag=0, int32 x 4) on world: its buffer changed between the "
                        "isend and the end of its wait()"));
  EXPECT_TRUE(e.outcomes()[1].ok()) << e.what();
}

TEST(ChangedSendBuffer, IsNotCheckedWhenTheClusterSaysSo) {
  auto cluster = world(2);
  cluster.check_send_buffers = false;
  dist::sim::run(cluster, test_support::change_isend_buffer_before_wait);
}

TEST(ChangedSendBuffer, AnUntouchedBufferPasses) {
  dist::sim::run(world(2), [] {
    std::vector<double> v(1000, 0.5);
    if (dist::get_rank() == 0) {
      auto work = dist::isend(std::span<double>(v), 1);
      dist::barrier();
      work.wait();
    } else {
      dist::barrier();
      dist::recv(v, 0);
    }
  });
}

}  // namespace
