// monitored_barrier and Work::wait with a timeout over whole worlds: a barrier every rank reaches
// passes; one that ranks come to late raises, on every rank that came in time, a TimeoutError
// naming the first late rank (every one with wait_all_ranks); a collective waited with a timeout
// that completes in time is an ordinary wait. A barrier completes the group's earlier async
// collectives (torch's behaviour), so their results are in place before their own wait.
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <thread>

#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

using namespace std::chrono_literals;

class MonitoredBarrier : public conformance::Test {};

// What a rank saw: "passed", or the TimeoutError's message and the ranks it names.
struct Seen {
  std::string text;
  std::vector<int> named;
};

Seen monitored(bool wait_all, int stays_away, int also_away) {
  const int rank = dist::get_rank();
  dist::monitored_barrier(30s);  // every rank comes
  if (rank == stays_away || rank == also_away) {
    // Comes after the others gave up, so a process world stays in step for the next case: the
    // real backends let it pass (everyone's key is there), sim fails it with the op.
    std::this_thread::sleep_for(1s);
    try {
      dist::monitored_barrier(30s, wait_all);
    } catch (const dist::TimeoutError&) {
    }
    return {"came late", {}};
  }
  Seen seen{"passed", {}};
  try {
    dist::monitored_barrier(300ms, wait_all);
  } catch (const dist::TimeoutError& e) {
    seen = {e.what(), e.missing_ranks()};
  }
  return seen;
}

TEST_F(MonitoredBarrier, NamesTheRanksThatStayedAway) {
  for (int n : world_runner().world_sizes) {
    if (n < 3) continue;
    for (const bool wait_all : {false, true}) {
      const auto got = run_world(n, [&] { return monitored(wait_all, 1, n - 1); });
      const std::string named = wait_all ? "ranks 1, " + std::to_string(n - 1) : "rank 1";
      for (const auto& [rank, seen] : got) {
        if (rank == 1 || rank == n - 1) continue;
        EXPECT_NE(seen.text.find("monitored_barrier (timeout 300 ms): " + named +
                                 (wait_all ? " have" : " has") + " not arrived"),
                  std::string::npos)
            << world_runner().name << ", world " << n << ", rank " << rank << ": " << seen.text;
        const std::vector<int> expected =
            wait_all ? std::vector<int>{1, n - 1} : std::vector<int>{1};
        EXPECT_EQ(seen.named, expected)
            << world_runner().name << ", world " << n << ", rank " << rank;
      }
    }
  }
}

TEST_F(MonitoredBarrier, ATimedWaitThatCompletesIsAnOrdinaryWait) {
  for (int n : world_runner().world_sizes) {
    const auto got = run_world(n, [] {
      std::vector<std::int64_t> v(5, dist::get_rank() + 1);
      auto work = dist::all_reduce_async(std::span<std::int64_t>(v));
      work.wait(30s);
      return std::make_pair(v, work.exception() == nullptr);
    });
    const auto sum = static_cast<std::int64_t>(n) * (n + 1) / 2;
    for (const auto& [rank, result] : got) {
      EXPECT_EQ(result.first, std::vector<std::int64_t>(5, sum))
          << world_runner().name << ", world " << n << ", rank " << rank;
      EXPECT_TRUE(result.second) << "exception() is not null after a successful wait";
    }
  }
}

class BarrierOrder : public conformance::Test {};

using V = std::vector<std::int64_t>;
constexpr int calls = 16;

// What a rank saw once its barrier returned, before any wait: each call's result, and how many of
// the calls' Works said they were complete.
struct AfterBarrier {
  std::vector<V> results;
  int completed = 0;
};

// `calls` all_reduce_async of (rank + i), then the barrier `meet` makes; the Works are waited
// only after what the barrier left was copied.
template <class Meet>
AfterBarrier async_calls_then(Meet meet) {
  const int rank = dist::get_rank();
  std::vector<V> values(calls);
  std::vector<dist::Work> works;
  for (int i = 0; i < calls; ++i) {
    values[static_cast<std::size_t>(i)].assign(4, rank + i);
    works.push_back(dist::all_reduce_async(std::span<std::int64_t>(values[i])));
  }
  meet();
  AfterBarrier seen{values, 0};
  for (auto& w : works) seen.completed += w.is_completed() ? 1 : 0;
  for (auto& w : works) w.wait();
  return seen;
}

void expect_all_in_place(const RankResults<AfterBarrier>& got, int n, const char* how) {
  for (const auto& [rank, seen] : got) {
    for (int i = 0; i < calls; ++i)
      EXPECT_EQ(seen.results[static_cast<std::size_t>(i)], V(4, n * (n - 1) / 2 + n * i))
          << world_runner().name << ", world " << n << ", rank " << rank << ": call " << i
          << " had not written its result when " << how << " returned";
    EXPECT_EQ(seen.completed, calls) << world_runner().name << ", world " << n << ", rank " << rank
                                     << ": Works complete after " << how;
  }
}

TEST_F(BarrierOrder, ABarrierCompletesTheGroupsEarlierAsyncCollectives) {
  for (int n : world_runner().world_sizes) {
    if (n < 2) continue;
    expect_all_in_place(run_world(n, [] { return async_calls_then([] { dist::barrier(); }); }), n,
                        "barrier()");
  }
}

TEST_F(BarrierOrder, AnAsyncBarriersWaitCompletesTheGroupsEarlierAsyncCollectives) {
  const auto n = world_runner().world_of_at_least(2);
  if (!n) GTEST_SKIP() << *lacks_world(2);
  expect_all_in_place(
      run_world(*n, [] { return async_calls_then([] { dist::barrier_async().wait(); }); }), *n,
      "barrier_async().wait()");
}

}  // namespace
}  // namespace conformance
