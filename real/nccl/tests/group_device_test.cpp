// The nccl backend on GPUs beyond single collectives: groups (ncclCommSplit), p2p, the object
// helpers (host bytes staged, variable-size all_gather), init_dist's device choice, a peer
// that never arrives (TimeoutError naming the call, communicator aborted, no hang) and
// DIST_DEBUG=detail's call checks.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dist/real/init.hpp"
#include "real/nccl/tests/nccl_test_util.hpp"
#include "testing/ports.hpp"
#include "testing/processes.hpp"

namespace {

using namespace nccl_test;

TEST(NcclGroups, EvenRanksSplitOffAndReduceAmongThemselves) {
  const int n = gpu_count();
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  const auto got = run(n, [&] {
    std::vector<int> evens;
    for (int r = 0; r < n; r += 2) evens.push_back(r);
    dist::Group group = dist::new_group(evens);
    std::vector<std::int64_t> v{dist::get_rank() + 1, 10};
    if (group.is_member()) dist::all_reduce(v, dist::ReduceOp::sum, group);
    dist::barrier();
    return v;
  });
  std::int64_t even_sum = 0;
  int evens = 0;
  for (int r = 0; r < n; r += 2) even_sum += r + 1, ++evens;
  for (int r = 0; r < n; ++r) {
    const auto expected = r % 2 == 0 ? std::vector<std::int64_t>{even_sum, 10 * evens}
                                     : std::vector<std::int64_t>{r + 1, 10};
    EXPECT_EQ(got[static_cast<std::size_t>(r)], expected) << "rank " << r;
  }
}

TEST(NcclP2P, RingPassesEachRanksValueToItsSuccessor) {
  const int n = gpu_count();
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  const auto got = run(n, [&] {
    const int me = dist::get_rank();
    std::vector<float> out{static_cast<float>(me), 0.5f}, in(2);
    // Even ranks send first, odd ranks receive first: one stream per communicator runs the
    // calls in issue order, so the ring must not wait on itself.
    if (me % 2 == 0) {
      dist::send(std::span<float>(out), (me + 1) % n);
      dist::recv(std::span<float>(in), (me + n - 1) % n);
    } else {
      dist::recv(std::span<float>(in), (me + n - 1) % n);
      dist::send(std::span<float>(out), (me + 1) % n);
    }
    return in;
  });
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(got[static_cast<std::size_t>(r)], (std::vector<float>{static_cast<float>((r + n - 1) % n), 0.5f}));
}

// Issue 21, finding 6: all_to_all in place on device buffers; the grouped sends must read the
// input as it was, not chunks the receives already overwrote. The front end refuses overlapping
// buffers (check_disjoint), so the backend is called directly.
TEST(NcclAllToAll, InPlaceOnTheDeviceSendsTheOriginalChunks) {
  const int n = gpu_count();
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  constexpr std::size_t chunk = 1000;
  const auto got = run(n, [&] {
    const int me = dist::get_rank();
    std::vector<std::int32_t> mine(chunk * static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < mine.size(); ++i)
      mine[i] = me * 1000000 + static_cast<std::int32_t>(i);
    DeviceVector<std::int32_t> d(mine);
    const auto t = d.tensor();
    dist::core::current_context()
        ->world->backend->all_to_all(dist::detail::buffer_of(t), dist::detail::buffer_of(t))
        .wait();
    return d.to_host();
  });
  for (int r = 0; r < n; ++r) {
    std::size_t wrong = 0;
    for (int from = 0; from < n; ++from)
      for (std::size_t k = 0; k < chunk; ++k) {
        const std::size_t at = static_cast<std::size_t>(from) * chunk + k;
        const auto expected =
            from * 1000000 + static_cast<std::int32_t>(static_cast<std::size_t>(r) * chunk + k);
        if (got[static_cast<std::size_t>(r)][at] != expected) ++wrong;
      }
    EXPECT_EQ(wrong, 0u) << "rank " << r << ": wrong elements";
  }
}

TEST(NcclObjects, HelpersRunOverStagedHostBytes) {
  const int n = gpu_count();
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  const auto got = run(n, [&] {
    const int me = dist::get_rank();
    // Different sizes per rank: the variable-size all_gather.
    const auto all = dist::all_gather_object(std::string(static_cast<std::size_t>(me) * 3 + 1, 'a' + static_cast<char>(me)));
    std::vector<std::map<std::string, int>> box{{{"from", me}}};
    dist::broadcast_object_list(box, n - 1);
    return std::pair{all, box[0].at("from")};
  });
  for (int r = 0; r < n; ++r) {
    const auto& [all, from] = got[static_cast<std::size_t>(r)];
    ASSERT_EQ(all.size(), static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k)
      EXPECT_EQ(all[static_cast<std::size_t>(k)], std::string(static_cast<std::size_t>(k) * 3 + 1, 'a' + static_cast<char>(k)));
    EXPECT_EQ(from, n - 1);
  }
}

TEST(NcclFailures, APeerThatNeverArrivesTimesOutAndAbortsTheCommunicator) {
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  const auto timeout = std::chrono::milliseconds(10000);
  const auto started = std::chrono::steady_clock::now();
  std::atomic<bool> rank0_done{false};
  const auto got = run(2, [&] {
    std::string outcome;
    if (dist::get_rank() == 1) {  // never joins the all_reduce; leaves once rank 0 has seen why
      const auto limit = std::chrono::steady_clock::now() + timeout * 4;
      while (!rank0_done && std::chrono::steady_clock::now() < limit)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return outcome;
    }
    std::vector<int> v{1};
    try {
      dist::all_reduce(v);
      outcome = "completed";
    } catch (const dist::TimeoutError& e) {
      outcome = std::string("timeout: ") + e.what();
    }
    try {
      dist::all_reduce(v);
      outcome += " | second call completed";
    } catch (const dist::BackendError& e) {
      outcome += std::string(" | ") + e.what();
    }
    rank0_done = true;
    return outcome;
  }, timeout);
  const std::string& outcome = got[0];
  EXPECT_EQ(outcome.rfind("timeout: ", 0), 0u) << outcome;
  EXPECT_NE(outcome.find("all_reduce #1"), std::string::npos) << outcome;
  EXPECT_NE(outcome.find("was aborted"), std::string::npos) << outcome;
  EXPECT_NE(outcome.find("all_reduce #2"), std::string::npos) << outcome;  // refused: aborted
  EXPECT_EQ(outcome.find("second call completed"), std::string::npos) << outcome;
  EXPECT_LT(std::chrono::steady_clock::now() - started, timeout * 4) << "took too long";
}

// Issue 21, finding 4: send/recv do not advance the collective number, so ranks that made
// different numbers of p2p calls still answer the same roll call and both name the absent rank
// (before, rank 0 called it all_reduce #2 and rank 1 all_reduce #3, and each named the other).
TEST(NcclFailures, TimeoutsNameTheAbsentRankAfterUnevenP2p) {
  if (const auto why = skip_reason(3); !why.empty()) GTEST_SKIP() << why;
  const auto timeout = std::chrono::milliseconds(10000);
  std::atomic<int> finished{0};
  const auto got = run(
      3,
      [&] {
    const int me = dist::get_rank();
    std::vector<float> x{1.0f};
    if (me == 0) dist::send(std::span<float>(x), 1);  // one p2p call
    if (me == 1) {                                    // two
      dist::recv(std::span<float>(x), 0);
      dist::send(std::span<float>(x), 2);
    }
    std::vector<int> missing{-1};
    if (me == 2) {  // one, then never joins the all_reduce; leaves once the others have timed out
      dist::recv(std::span<float>(x), 1);
      const auto limit = std::chrono::steady_clock::now() + timeout * 4;
      while (finished < 2 && std::chrono::steady_clock::now() < limit)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return missing;
    }
    std::vector<int> v{1};
    try {
      dist::all_reduce(v);
    } catch (const dist::TimeoutError& e) {
      missing = e.missing_ranks();
    }
    ++finished;
    return missing;
      },
      timeout);
  EXPECT_EQ(got[0], std::vector<int>{2});
  EXPECT_EQ(got[1], std::vector<int>{2});
}

// Issue 21, finding 4: a p2p call that times out names its peer (no roll call).
TEST(NcclFailures, AP2pTimeoutNamesItsPeer) {
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  const auto timeout = std::chrono::milliseconds(5000);
  std::atomic<bool> rank0_done{false};
  const auto got = run(
      2,
      [&] {
    std::string outcome;
    if (dist::get_rank() == 1) {  // never receives
      const auto limit = std::chrono::steady_clock::now() + timeout * 4;
      while (!rank0_done && std::chrono::steady_clock::now() < limit)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return std::pair{outcome, std::vector<int>{}};
    }
    std::vector<float> big(std::size_t{1} << 22, 1.0f);  // more than NCCL's buffers hold
    std::vector<int> missing;
    try {
      dist::send(std::span<float>(big), 1);
      outcome = "completed";
    } catch (const dist::TimeoutError& e) {
      outcome = e.what();
      missing = e.missing_ranks();
    }
    rank0_done = true;
    return std::pair{outcome, missing};
      },
      timeout);
  const auto& [outcome, missing] = got[0];
  EXPECT_EQ(missing, std::vector<int>{1}) << outcome;
  EXPECT_NE(outcome.find("send #1 to group rank 1"), std::string::npos) << outcome;
  EXPECT_NE(outcome.find("rank 1 did not take part"), std::string::npos) << outcome;
}

// DIST_DEBUG=detail: ranks that call the same collective with different counts, or different
// collectives, all get the same DesyncError (without it NCCL would hang or corrupt memory).
TEST(NcclFailures, FingerprintsTurnMismatchesIntoDesyncErrors) {
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  ::setenv("DIST_DEBUG", "detail", 1);
  const auto got = run(2, [] {
    const int me = dist::get_rank();
    std::vector<std::string> outcomes;
    std::vector<float> v(me == 1 ? 20 : 10, 1.0f);
    for (int step = 0; step < 2; ++step) {
      try {
        if (step == 0) dist::all_reduce(v);
        else if (me == 0) dist::broadcast(v, 1);
        else dist::all_reduce(v, dist::ReduceOp::max);
        outcomes.emplace_back("completed");
      } catch (const dist::DesyncError& e) {
        outcomes.emplace_back(e.what());
      }
    }
    return outcomes;
  }, 20s);
  ::unsetenv("DIST_DEBUG");
  for (int r = 0; r < 2; ++r) {
    const auto& o = got[static_cast<std::size_t>(r)];
    EXPECT_NE(o[0].find("ranks disagree on 'count'"), std::string::npos) << o[0];
    EXPECT_NE(o[0].find("rank 1: all_reduce(float32, count 20, op sum)"), std::string::npos) << o[0];
    EXPECT_NE(o[1].find("#2 on the group of world ranks [0, 1]"), std::string::npos) << o[1];
    EXPECT_NE(o[1].find("disagree on 'kind'"), std::string::npos) << o[1];
  }
}

TEST(NcclInitDist, PicksTheDeviceOfTheLocalRank) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  using test_support::ScopedEnv;
  // A world of one process has LOCAL_RANK 0 (init_dist refuses a local rank not below
  // WORLD_SIZE); local ranks beyond it, process p on GPU p, are nccl_procs' (ci/gpu-run).
  const int local_rank = 0;
  ScopedEnv rank("RANK", "0"), world("WORLD_SIZE", "1"), local("LOCAL_RANK", std::to_string(local_rank)),
      addr("MASTER_ADDR", "127.0.0.1"), port("MASTER_PORT", std::to_string(test_support::free_port()));
  dist::init_dist("pytorch", dist::Backend::nccl);
  EXPECT_EQ(dist::get_comm_device(), dist::Device::cuda(local_rank % gpu_count()));
  EXPECT_EQ(dist::get_backend(), dist::Backend::nccl);
  std::vector<int> v{3};
  dist::all_reduce(v);
  EXPECT_EQ(v, std::vector<int>{3});
  // The front end answers a one-rank world itself: the world's backend is called directly so
  // that NCCL is reached on the device init_dist chose.
  std::vector<int> w{5, -5};
  dist::core::current_context()
      ->world->backend->all_reduce(dist::detail::buffer_of(std::span<int>(w)), dist::ReduceOp::sum)
      .wait();
  EXPECT_EQ(w, (std::vector<int>{5, -5}));
  dist::destroy_dist();
  EXPECT_FALSE(dist::is_distributed());
}

}  // namespace
