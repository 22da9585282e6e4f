// Misuse of the harness is an error, never a silent pass: dist:: calls from a rank's helper
// thread (and how ScopedRank binds one), invalid faults and clusters too large to run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using dist::sim::Cluster;
using dist::sim::Fault;
using ::testing::HasSubstr;

using sim_test::world;

// Runs f on a new thread and returns what it threw ("" when nothing).
template <class F>
std::string thrown_on_thread(F f) {
  std::string what;
  std::thread t([&] {
    try {
      f();
    } catch (const dist::NotInitialized& e) {
      what = std::string("NotInitialized: ") + e.what();
    } catch (const std::exception& e) {
      what = std::string("other: ") + e.what();
    }
  });
  t.join();
  return what;
}

TEST(HelperThread, CollectiveFromAnUnboundHelperRaisesNotInitialized) {
  const auto messages = dist::sim::run(world(2), [] {
    std::vector<int> v{dist::get_rank() + 1};
    auto what = thrown_on_thread([&] { dist::all_reduce(v); });
    dist::barrier();  // the ranks are still in step
    return what + (v[0] == dist::get_rank() + 1 ? "" : " (data changed)");
  });
  for (const auto& m : messages) {
    EXPECT_THAT(m, HasSubstr("NotInitialized: "));
    EXPECT_THAT(m, HasSubstr("not a rank of the running dist::sim::run"));
    EXPECT_THAT(m, HasSubstr("dist::sim::ScopedRank"));
    EXPECT_THAT(m, ::testing::Not(HasSubstr("data changed")));
  }
}

TEST(HelperThread, QueriesFromAnUnboundHelperRaiseInsteadOfAnsweringRankZeroOfOne) {
  const auto messages = dist::sim::run(world(3), [] {
    return std::vector<std::string>{thrown_on_thread([] { (void)dist::get_world_size(); }),
                                    thrown_on_thread([] { (void)dist::get_rank(); }),
                                    thrown_on_thread([] { (void)dist::is_distributed(); }),
                                    thrown_on_thread([] { (void)dist::sim::rank_rng()(); })};
  });
  for (const auto& rank : messages)
    for (const auto& m : rank) EXPECT_THAT(m, HasSubstr("NotInitialized: called from a thread"));
}

TEST(HelperThread, ScopedRankLetsTheHelperActAsItsRank) {
  for (auto schedule : {dist::sim::Schedule::concurrent, dist::sim::Schedule::deterministic}) {
    Cluster c = world(3);
    c.schedule = schedule;
    c.fibers =
        false;  // the rank blocks its thread in join(): fiber ranks would all wait (fibers_test)
    const auto results = dist::sim::run(c, [] {
      const auto me = dist::sim::current_rank();
      EXPECT_EQ(me.rank(), dist::get_rank());
      std::vector<int> v{dist::get_rank() + 1};
      int helper_rank = -1;
      std::thread helper([&, me] {
        dist::sim::ScopedRank scope(me);
        helper_rank = dist::get_rank();
        dist::all_reduce(v);
      });
      helper.join();
      dist::barrier();  // the rank thread and its helper share one call sequence
      return std::vector<int>{helper_rank, v[0]};
    });
    for (int r = 0; r < 3; ++r)
      EXPECT_EQ(results[static_cast<std::size_t>(r)], (std::vector<int>{r, 6})) << "rank " << r;
  }
}

TEST(HelperThread, OutsideARunAnUnboundThreadIsStillNotDistributed) {
  EXPECT_FALSE(dist::is_distributed());
  EXPECT_EQ(dist::get_world_size(), 1);
  EXPECT_EQ(thrown_on_thread([] {
              std::vector<int> v{5};
              dist::all_reduce(v);
              if (v[0] != 5 || dist::get_rank() != 0) throw std::runtime_error("changed");
            }),
            "");
}

TEST(HelperThread, BindingsAreCheckedAgainstTheRunsInProgress) {
  EXPECT_THROW((void)dist::sim::current_rank(), dist::InvalidArgument);  // not a rank thread
  const auto bindings = dist::sim::run(world(2), [] { return dist::sim::current_rank(); });
  try {
    dist::sim::ScopedRank scope(bindings[1]);
    FAIL() << "a binding of an ended run was accepted";
  } catch (const dist::InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 1 belongs to a dist::sim::run that has ended"));
  }
  EXPECT_THROW(dist::sim::ScopedRank{dist::sim::RankBinding{}}, dist::InvalidArgument);
  EXPECT_FALSE(dist::is_distributed());  // the failed scopes bound nothing
}

// What rank r threw in a failed run ("ok" when it returned).
std::string outcome(const dist::sim::RunError& e, int r) {
  return e.outcomes()[static_cast<std::size_t>(r)].message;
}

TEST(Overlap, AnInputOverlappingAnotherRanksSlotIsInvalid) {
  try {
    dist::sim::run(world(2), [] {
      std::vector<int> out(4, -1);
      const std::span<int> all(out);
      // Rank 0's slot is [0, 2): rank 0 passes it (the in-place form), rank 1 passes it too.
      std::iota(out.begin(), out.begin() + 2, 10 * dist::get_rank());
      dist::all_gather_async(all, all.subspan(0, 2)).wait();
    });
    FAIL() << "the run succeeded";
  } catch (const dist::sim::RunError& e) {
    EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(1)) << outcome(e, 1);
    EXPECT_THAT(outcome(e, 1), HasSubstr("all_gather: argument 'input' [0x"));
    EXPECT_THAT(outcome(e, 1), HasSubstr("overlaps argument 'output'"));
    EXPECT_THAT(outcome(e, 1), HasSubstr("only as exactly this rank's slot, elements [2, 4)"));
  }
}

TEST(Overlap, ReduceScatterAndAllToAllRejectOverlaps) {
  const auto check =
      [](const std::function<void(std::span<int>)>& call, const char* needle, int ranks = 2) {
    try {
      dist::sim::run(world(2), [&] {
        std::vector<int> buffer(6);
        call(buffer);
      });
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const dist::sim::RunError& e) {
      for (int r = 0; r < ranks; ++r) {
        EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(r)) << outcome(e, r);
        EXPECT_THAT(outcome(e, r), HasSubstr(needle));
      }
    }
  };
  check([](std::span<int> b) { dist::all_to_all(b.subspan(0, 4), b.subspan(2, 4)); },
        "all_to_all: argument 'input'");
  check([](std::span<int> b) { dist::all_to_all(b.subspan(0, 4), b.subspan(0, 4)); },
        "may not overlap it");
  check([](std::span<int> b) { dist::reduce_scatter(b.subspan(1, 2), b.subspan(0, 4)); },
        "reduce_scatter: argument 'output'");
  check([](std::span<int> b) { dist::gather_async(b.subspan(0, 4), b.subspan(3, 2), 0).wait(); },
        "gather: argument 'input'", 1);  // the output of a rank other than dst is ignored
}

TEST(Overlap, InPlaceFormsStayAllowed) {
  const auto results = dist::sim::run(world(3), [] {
    const int r = dist::get_rank();
    std::vector<int> gathered(6, -1);
    gathered[2 * r] = r;
    gathered[2 * r + 1] = 10 + r;
    const std::span<int> g(gathered);
    dist::all_gather_async(g, g.subspan(static_cast<std::size_t>(2 * r), 2)).wait();
    std::vector<int> scattered{1, 2, 3};  // every rank's chunk j is j + 1
    dist::reduce_scatter(std::span<int>(scattered).subspan(static_cast<std::size_t>(r), 1),
                         std::span<const int>(scattered));
    return std::make_pair(gathered, scattered[static_cast<std::size_t>(r)]);
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(results[static_cast<std::size_t>(r)].first, (std::vector<int>{0, 10, 1, 11, 2, 12}));
    EXPECT_EQ(results[static_cast<std::size_t>(r)].second, 3 * (r + 1)) << "rank " << r;
  }
}

// Expects run(cluster) (both forms) to throw InvalidArgument containing each of `words`.
void expect_rejected(const Cluster& c, const std::vector<std::string>& words) {
  bool body_ran = false;
  for (bool with_results : {false, true}) {
    try {
      if (with_results) dist::sim::run(c, [&] { return body_ran = true; });
      else dist::sim::run(c, [&] { body_ran = true; });
      ADD_FAILURE() << dist::sim::to_string(c) << " was accepted";
    } catch (const dist::InvalidArgument& e) {
      for (const auto& w : words) EXPECT_THAT(e.what(), HasSubstr(w));
    }
  }
  EXPECT_FALSE(body_ran);
}

TEST(ClusterChecks, InvalidFaultsAreRejected) {
  Cluster c = world(2);
  c.faults = {Fault::kill(9, 1)};
  expect_rejected(c, {"faults[0]", "rank 9", "world of 2"});
  c.faults = {Fault::kill(-1, 1)};
  expect_rejected(c, {"rank -1"});
  c.faults = {Fault::kill(1, 1), Fault::fail(0, 0)};
  expect_rejected(c, {"faults[1]", "at_call = 0", "from 1"});
  c.faults = {Fault::stall(1, 2, std::chrono::milliseconds(-5))};
  expect_rejected(c, {"faults[0]", "delay = -5ms", "negative"});
}

TEST(ClusterChecks, OverflowingAndHugeShapesAreRejectedBeforeAllocating) {
  expect_rejected({.nodes = 65536, .ranks_per_node = 65536}, {"65536 × 65536", "4294967296"});
  expect_rejected({.nodes = 3, .ranks_per_node = 1 << 30}, {"max_world_size"});
  expect_rejected({.nodes = 2, .ranks_per_node = Cluster::default_max_world_size / 2 + 1},
                  {"max_world_size = 262144", "raise it"});
  // The limit is a setting: a smaller one refuses a world the default admits.
  Cluster small{.nodes = 2, .ranks_per_node = 4};
  small.max_world_size = 4;
  expect_rejected(small, {"2 × 4 = 8 ranks", "max_world_size = 4"});
  small.max_world_size = 0;
  expect_rejected(small, {"max_world_size must be >= 1, got 0"});
  // world_size() saturates where the product overflows int (65536 x 65536 read as 0).
  EXPECT_EQ((Cluster{.nodes = 65536, .ranks_per_node = 65536}.world_size()),
            std::numeric_limits<int>::max());
  EXPECT_EQ((Cluster{.nodes = -65536, .ranks_per_node = 65536}.world_size()),
            std::numeric_limits<int>::min());
  EXPECT_EQ((Cluster{.nodes = 3, .ranks_per_node = 5}.world_size()), 15);
}

}  // namespace

// A world too large for the memory at hand ends in a RunError that says so, not in an uncaught
// std::bad_alloc. In a child process whose address space is capped at 1 GiB (EXPECT_EXIT).
void run_out_of_memory() {
  const rlimit cap{.rlim_cur = rlim_t{1} << 30, .rlim_max = rlim_t{1} << 30};
  if (::setrlimit(RLIMIT_AS, &cap) != 0) std::_Exit(4);
  try {
    dist::sim::run({.nodes = 2, .ranks_per_node = 4096, .stack_size = 64 << 10},
                   [] { dist::barrier(); });
  } catch (const dist::sim::RunError& e) {
    std::fprintf(stderr, "RunError: %s\n", e.what());
    std::_Exit(0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "other: %s\n", e.what());
  }
  std::_Exit(3);
}

TEST(ClusterChecksDeathTest, RunningOutOfMemoryIsARunError) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit under an address-space cap";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_out_of_memory(), ::testing::ExitedWithCode(0), "RunError: .*out of memory");
}
