// Work::wait with a timeout, Work::exception, monitored_barrier and a group's own timeout on sim:
// a wait with its own timeout ends there, the TimeoutError names the ranks that never joined, and
// a monitored barrier waits out its timeout (in virtual time in deterministic mode).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using namespace std::chrono_literals;
using dist::sim::Cluster;
using dist::sim::Schedule;
using sim_test::world;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Cluster deterministic(int n) {
  Cluster c = world(n);
  c.schedule = Schedule::deterministic;
  c.seed = 7;
  return c;
}

// Both schedules; in deterministic mode the timeouts are long, which only virtual time makes fast.
std::vector<std::pair<Cluster, std::chrono::milliseconds>> schedules(int n) {
  return {{world(n), 100ms}, {deterministic(n), std::chrono::hours(1)}};
}

TEST(TimedWait, ACollectiveALateRankHasNotJoinedTimesOutNamingIt) {
  // Concurrent mode: rank 2 is busy outside dist for longer than the others wait.
  std::vector<std::string> errors(3);
  std::vector<std::vector<int>> missing(3);
  const auto e = sim_test::failure_of(world(3), [&] {
    const int rank = dist::get_rank();
    std::vector<float> v(4, 1.0F);
    if (rank == 2) std::this_thread::sleep_for(300ms);
    auto work = dist::all_reduce_async(std::span<float>(v));
    if (rank != 2) {
      EXPECT_EQ(work.exception(), nullptr);  // pending
    }
    try {
      work.wait(50ms);
    } catch (const dist::TimeoutError& error) {
      errors[static_cast<std::size_t>(rank)] = error.what();
      missing[static_cast<std::size_t>(rank)] = error.missing_ranks();
      EXPECT_NE(work.exception(), nullptr);
      throw;
    }
  });
  for (const int r : {0, 1}) {
    EXPECT_THAT(missing[static_cast<std::size_t>(r)], ElementsAre(2)) << errors[0];
    EXPECT_THAT(errors[static_cast<std::size_t>(r)], HasSubstr("after 50 ms"));
  }
  EXPECT_TRUE(e.failed_with<dist::TimeoutError>(0)) << e.what();
}

TEST(TimedWait, AWaitThatCanNeverCompleteIsStillADeadlockAtOnce) {
  const auto e = sim_test::failure_of(deterministic(2), [] {
    if (dist::get_rank() == 1) return;
    std::vector<float> v(4, 1.0F);
    dist::all_reduce_async(std::span<float>(v)).wait(std::chrono::hours(1));
  });
  EXPECT_TRUE(e.failed_with<dist::DeadlockError>(0)) << e.what();
  EXPECT_THAT(e.what(), HasSubstr("rank 1 returned without calling it"));
}

TEST(TimedWait, AWaitThatCompletesInTimeIsAnOrdinaryWait) {
  for (const auto& [cluster, timeout] : schedules(2)) {
    dist::sim::run(cluster, [timeout = timeout] {
      std::vector<int> v(3, dist::get_rank() + 1);
      auto work = dist::all_reduce_async(std::span<int>(v));
      work.wait(timeout);
      EXPECT_EQ(v, std::vector<int>(3, 3));
      EXPECT_EQ(work.exception(), nullptr);
      EXPECT_TRUE(work.is_completed());
    });
  }
}

TEST(TimedWait, ANegativeTimeoutIsRejected) {
  dist::sim::run(world(2), [] {
    std::vector<int> v(1);
    auto work = dist::all_reduce_async(std::span<int>(v));
    EXPECT_THROW(work.wait(-1ms), dist::InvalidArgument);
    work.wait();
    EXPECT_THROW(dist::monitored_barrier(-5ms), dist::InvalidArgument);
  });
}

TEST(MonitoredBarrier, NamesTheFirstRankThatDidNotArrive) {
  for (const auto& [cluster, timeout] : schedules(4)) {
    std::vector<std::string> errors(4);
    dist::sim::run(cluster, [&, timeout = timeout] {
      const int rank = dist::get_rank();
      dist::monitored_barrier(timeout);  // everyone arrives
      if (rank == 1 || rank == 3) return;
      try {
        dist::monitored_barrier(timeout);
        ADD_FAILURE() << "rank " << rank << ": no timeout";
      } catch (const dist::TimeoutError& e) {
        errors[static_cast<std::size_t>(rank)] = e.what();
        EXPECT_THAT(e.missing_ranks(), ElementsAre(1));
      }
    });
    EXPECT_EQ(errors[0], "monitored_barrier (timeout " + std::to_string(timeout.count()) +
                             " ms): rank 1 has not arrived");
    EXPECT_EQ(errors[2], errors[0]);
  }
}

TEST(MonitoredBarrier, WaitAllRanksNamesEveryRankThatDidNotArrive) {
  for (const auto& [cluster, timeout] : schedules(4)) {
    dist::sim::run(cluster, [timeout = timeout] {
      const int rank = dist::get_rank();
      if (rank == 1 || rank == 3) return;
      try {
        dist::monitored_barrier(timeout, true);
        ADD_FAILURE() << "rank " << rank << ": no timeout";
      } catch (const dist::TimeoutError& e) {
        EXPECT_EQ(std::string(e.what()), "monitored_barrier (timeout " +
                                             std::to_string(timeout.count()) +
                                             " ms): ranks 1, 3 have not arrived");
        EXPECT_THAT(e.missing_ranks(), ElementsAre(1, 3));
      }
    });
  }
}

TEST(MonitoredBarrier, OnASubgroupNamesWorldRanks) {
  dist::sim::run(deterministic(4), [] {
    const auto odd = dist::new_group({1, 3});
    if (dist::get_rank() != 3) return;
    try {
      dist::monitored_barrier(std::chrono::minutes(30), true, odd);
      ADD_FAILURE() << "no timeout";
    } catch (const dist::TimeoutError& e) {
      EXPECT_THAT(e.missing_ranks(), ElementsAre(1));
    }
  });
}

TEST(GroupOptions, AGroupsTimeoutEndsItsWaitsAndItsBackendIsRecorded) {
  const auto e = sim_test::failure_of(world(3), [] {
    const auto pair = dist::new_group({0, 1}, {.backend = dist::Backend::nccl, .timeout = 50ms});
    EXPECT_EQ(dist::get_backend(pair), dist::Backend::nccl);
    EXPECT_EQ(dist::get_backend(), dist::Backend::sim);
    if (dist::get_rank() == 2) return;
    if (dist::get_rank() == 1) std::this_thread::sleep_for(300ms);
    std::vector<int> v(2, 1);
    dist::all_reduce(v, dist::ReduceOp::sum, pair);
  });
  ASSERT_TRUE(e.failed_with<dist::TimeoutError>(0)) << e.what();
  EXPECT_THAT(e.outcomes()[0].message, HasSubstr("after 50 ms"));
}

TEST(GroupOptions, ANonPositiveTimeoutIsRejected) {
  dist::sim::run(world(2), [] {
    EXPECT_THROW(dist::new_group({0, 1}, {.timeout = 0ms}), dist::InvalidArgument);
  });
}

}  // namespace
