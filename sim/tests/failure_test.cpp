// The failure modes sim must turn into errors instead of hangs or garbage: desynchronised
// collectives, deadlocks, ranks that return early or throw, and timeouts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using ::testing::HasSubstr;
using dist::sim::RunError;
using Clock = std::chrono::steady_clock;

using sim_test::world;

// "Quickly": an error found by detection, not by the 5-minute timeout. The bound leaves room for
// ThreadSanitizer and a loaded CI machine (detection itself takes microseconds).
constexpr auto kQuickly = std::chrono::seconds(10);

std::string message_of(const RunError& e, int rank) {
  return e.outcomes().at(static_cast<std::size_t>(rank)).message;
}

TEST(Desync, DifferentCollectivesRaiseOnEveryRankQuickly) {
  const auto start = Clock::now();
  const auto e = sim_test::failure_of(world(4), [] {
    std::vector<float> v(4, 1.0f);
    if (dist::get_rank() == 1)
      dist::broadcast(v, 0);
    else
      dist::all_reduce(v);
  });
  EXPECT_LT(Clock::now() - start, kQuickly);
  EXPECT_EQ(e.code(), dist::ErrorCode::desync);
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(e.failed_with<dist::DesyncError>(r)) << message_of(e, r);
    EXPECT_THAT(message_of(e, r), HasSubstr("all_reduce(op=sum, float32 x 4)"));
    EXPECT_THAT(message_of(e, r), HasSubstr("broadcast(src=0, float32 x 4)"));
    EXPECT_THAT(message_of(e, r), HasSubstr("'kind'"));
  }
}

TEST(Desync, EachFingerprintFieldIsNamed) {
  struct Case {
    const char* field;
    std::function<void(int)> body;
  };
  const std::vector<Case> cases = {
      {"'count'", [](int r) { std::vector<int> v(r == 0 ? 3 : 4); dist::all_reduce(v); }},
      {"'op'", [](int r) { std::vector<int> v(2); dist::all_reduce(v, r == 0 ? "sum" : "max"); }},
      {"'src'", [](int r) { std::vector<int> v(2); dist::broadcast(v, r == 2 ? 1 : 0); }},
      {"'dtype'",
       [](int r) {
         if (r == 0) {
           std::vector<float> v(2);
           dist::all_reduce(v);
         } else {
           std::vector<int> v(2);
           dist::all_reduce(v);
         }
       }},
      {"'ranks'", [](int r) { dist::new_group(r == 0 ? std::vector{0, 1} : std::vector{1, 2}); }},
  };
  for (const auto& c : cases) {
    const auto e = sim_test::failure_of(world(3), [&] { c.body(dist::get_rank()); });
    for (int r = 0; r < 3; ++r) {
      EXPECT_TRUE(e.failed_with<dist::DesyncError>(r)) << c.field << ": " << message_of(e, r);
      EXPECT_THAT(message_of(e, r), HasSubstr(c.field));
    }
  }
}

TEST(Desync, SendRecvCountMismatchFailsBothSides) {
  const auto e = sim_test::failure_of(world(2), [] {
    if (dist::get_rank() == 0) {
      std::vector<double> v(3);
      dist::send(v, 1);
    } else {
      std::vector<double> v(5);
      dist::recv(v, 0);
    }
  });
  EXPECT_TRUE(e.failed_with<dist::DesyncError>(0));
  EXPECT_TRUE(e.failed_with<dist::DesyncError>(1));
  EXPECT_THAT(message_of(e, 1), HasSubstr("'count'"));
}

TEST(Deadlock, BarrierInsideMasterOnlyNamesBarrierAndReturnedRanks) {
  const auto start = Clock::now();
  const auto e =
      sim_test::failure_of(world(8), [] { dist::master_only([] { dist::barrier(); })(); });
  EXPECT_LT(Clock::now() - start, kQuickly);
  EXPECT_TRUE(e.failed_with<dist::DeadlockError>(0)) << message_of(e, 0);
  EXPECT_THAT(message_of(e, 0), HasSubstr("barrier()"));
  EXPECT_THAT(message_of(e, 0), HasSubstr("returned without calling it"));
  for (int r = 1; r < 8; ++r) EXPECT_TRUE(e.outcomes()[static_cast<std::size_t>(r)].ok());
}

TEST(Deadlock, RecvCycleListsEveryRanksPendingCall) {
  const auto e = sim_test::failure_of(world(3), [] {
    std::vector<int> v(1);
    const int r = dist::get_rank();
    dist::recv(v, (r + 1) % 3);
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(e.failed_with<dist::DeadlockError>(r)) << message_of(e, r);
    EXPECT_THAT(message_of(e, r), HasSubstr("no rank can make progress"));
    EXPECT_THAT(message_of(e, r), HasSubstr("rank 2: waits in recv(src=0, tag=0, int32 x 1)"));
  }
}

TEST(Deadlock, SendsDoNotBufferSoSendSendIsCaught) {
  const auto e = sim_test::failure_of(world(2), [] {
    std::vector<int> out(4, 1), in(4);
    const int peer = 1 - dist::get_rank();
    dist::send(out, peer);
    dist::recv(in, peer);
  });
  EXPECT_TRUE(e.failed_with<dist::DeadlockError>(0));
  EXPECT_TRUE(e.failed_with<dist::DeadlockError>(1));
}

TEST(Deadlock, CollectivesOnDifferentGroupsAreCaught) {
  const auto e = sim_test::failure_of(world(4), [] {
    auto pair = dist::new_group({0, 1});
    std::vector<int> v(1, 1);
    if (dist::get_rank() == 0)
      dist::all_reduce(v, "sum", pair);
    else
      dist::all_reduce(v);
  });
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(e.failed_with<dist::DeadlockError>(r)) << message_of(e, r);
  EXPECT_THAT(message_of(e, 0), HasSubstr("on group {0, 1}"));
  EXPECT_THAT(message_of(e, 0), HasSubstr("on world"));
}

TEST(RankFailure, AThrowingRankIsNamedOnEveryOtherRank) {
  const auto e = sim_test::failure_of(world(4), [] {
    if (dist::get_rank() == 2) throw std::runtime_error("out of memory in rank 2's model");
    std::vector<int> v(8, 1);
    dist::all_reduce(v);
  });
  EXPECT_THAT(message_of(e, 2), HasSubstr("out of memory"));
  for (int r : {0, 1, 3}) {
    ASSERT_TRUE(e.failed_with<dist::RankFailure>(r)) << message_of(e, r);
    try {
      std::rethrow_exception(e.outcomes()[static_cast<std::size_t>(r)].error);
    } catch (const dist::RankFailure& f) {
      EXPECT_EQ(f.failed_rank(), 2);
      EXPECT_THAT(f.what(), HasSubstr("rank 2 failed before calling it"));
    }
  }
}

TEST(RankFailure, AnEarlyReturnIsCaughtWhenTheOthersArriveLater) {
  const auto e = sim_test::failure_of(world(3), [] {
    if (dist::get_rank() == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    dist::barrier();
  });
  EXPECT_TRUE(e.outcomes()[0].ok());
  EXPECT_TRUE(e.failed_with<dist::DeadlockError>(1));
  EXPECT_TRUE(e.failed_with<dist::DeadlockError>(2));
  EXPECT_THAT(message_of(e, 1), HasSubstr("rank 0 returned without calling it"));
}

TEST(RankFailure, ReturningWithAnUnwaitedAsyncOpFailsThePeer) {
  const auto e = sim_test::failure_of(world(2), [] {
    static thread_local std::vector<int> v(4, 1);
    if (dist::get_rank() == 0) {
      (void)dist::all_reduce_async(std::span<int>(v));  // never waited
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    dist::all_reduce(v);
  });
  EXPECT_TRUE(e.failed_with<dist::DeadlockError>(1)) << message_of(e, 1);
  EXPECT_THAT(message_of(e, 1), HasSubstr("was still unmatched"));
}

// Runs its function when destroyed.
struct Defer {
  std::function<void()> run;
  explicit Defer(std::function<void()> f) : run(std::move(f)) {}
  ~Defer() { run(); }
};

// A rank that leaves by an exception while its all_reduce_async is in flight: its buffer goes with
// its stack, so the peer that posts later must get a RankFailure naming it, never an all_reduce
// that reads and writes the freed buffer (a heap-use-after-free under ASan, corrupted buffers
// without it). Both schedules.
TEST(RankFailure, ARankLeavingByAnExceptionWithWorkInFlightFailsThePeersCall) {
  for (const auto schedule :
       {dist::sim::Schedule::concurrent, dist::sim::Schedule::deterministic}) {
    auto cluster = world(2);
    cluster.schedule = schedule;
    SCOPED_TRACE(schedule == dist::sim::Schedule::concurrent ? "concurrent" : "deterministic");
    const auto e = sim_test::failure_of(cluster, [] {
      if (dist::get_rank() == 0) {
        // Unwound last: rank 1 posts while rank 0 is still leaving, its buffer already freed.
        const Defer linger([] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); });
        std::vector<float> v(10000, 1.0F);
        dist::Work work = dist::all_reduce_async(std::span<float>(v));
        std::vector<int> posted{1};
        dist::send(posted, 1);  // rank 1 posts its side after this one's, on either schedule
        throw std::runtime_error("rank 0's step failed");
      }
      std::vector<int> posted{0};
      dist::recv(posted, 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // rank 0 is leaving by now
      std::vector<float> v(10000, 1.0F);
      dist::all_reduce(v);
    });
    EXPECT_THAT(message_of(e, 0), HasSubstr("rank 0's step failed"));
    ASSERT_TRUE(e.failed_with<dist::RankFailure>(1)) << message_of(e, 1);
    EXPECT_THAT(message_of(e, 1), HasSubstr("rank 0 left by an exception while its all_reduce"));
  }
}

TEST(Timeout, ARankBusyOutsideTheFabricTimesOutItsPeers) {
  auto cluster = world(2);
  cluster.timeout = std::chrono::milliseconds(50);
  const auto e = sim_test::failure_of(cluster, [] {
    if (dist::get_rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::vector<int> v(1);
    dist::all_reduce(v);
  });
  ASSERT_TRUE(e.failed_with<dist::TimeoutError>(0)) << message_of(e, 0);
  EXPECT_THAT(message_of(e, 0), HasSubstr("all_reduce(op=sum, int32 x 1) on world #1"));
  EXPECT_THAT(message_of(e, 0), HasSubstr("never arrived: ranks 1"));
  try {
    std::rethrow_exception(e.outcomes()[0].error);
  } catch (const dist::TimeoutError& t) {
    EXPECT_EQ(t.missing_ranks(), std::vector<int>{1});
  }
  EXPECT_FALSE(e.outcomes()[1].ok());  // it arrives at an op that has already failed
}

TEST(Recovery, ARunAfterAFailedRunWorks) {
  sim_test::failure_of(world(2), [] { dist::master_only([] { dist::barrier(); })(); });
  const auto out = dist::sim::run(world(2), [] {
    std::vector<int> v{dist::get_rank() + 1};
    dist::all_reduce(v);
    return v[0];
  });
  EXPECT_EQ(out, (std::vector<int>{3, 3}));
}

}  // namespace
