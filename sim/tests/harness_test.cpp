// sim as a test harness: the deterministic scheduler replays interleavings from a seed, faults
// are injected from the Cluster, and traces are written as Chrome-trace JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using ::testing::HasSubstr;
using dist::sim::Cluster;
using dist::sim::Fault;
using dist::sim::Schedule;

Cluster deterministic(int n, std::uint64_t seed) {
  return {.nodes = 1, .ranks_per_node = n, .seed = seed, .schedule = Schedule::deterministic};
}

// The order in which ranks ran their code between communication points.
std::vector<int> interleaving(const Cluster& cluster) {
  std::vector<int> log;  // only one rank runs at a time in deterministic mode
  dist::sim::run(cluster, [&] {
    const int r = dist::get_rank();
    std::vector<int> v{r};
    for (int step = 0; step < 4; ++step) {
      log.push_back(r);
      auto w = dist::all_reduce_async(std::span<int>(v));
      log.push_back(r);
      w.wait();
    }
    dist::barrier();
  });
  return log;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The rank threads of sim runs alive in this process (sim names them "sim rank N"; a sanitizer's
// own threads, which start when they please, are not counted).
int rank_thread_count() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    n += std::getline(comm, name) && name.starts_with("sim rank ");
  }
  return n;
}

// The rank threads once none is left, or after 5 s. A joined thread's entry in /proc/self/task
// can outlive pthread_join by a moment (the kernel wakes the joiner before it reaps the task), so
// a count taken straight after a run may still include a rank thread that has ended; a thread
// left running keeps the count up for the whole 5 s.
int rank_threads_left() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int n = rank_thread_count();
  while (n > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = rank_thread_count();
  }
  return n;
}

TEST(Deterministic, TheSameSeedReplaysTheSameInterleaving) {
  const auto first = interleaving(deterministic(4, 7));
  EXPECT_EQ(first.size(), 4u * 8u);
  EXPECT_EQ(interleaving(deterministic(4, 7)), first);
  std::set<std::vector<int>> seen;
  for (std::uint64_t seed = 0; seed < 8; ++seed) seen.insert(interleaving(deterministic(4, seed)));
  EXPECT_GT(seen.size(), 1u) << "different seeds should be able to give different interleavings";
}

TEST(Deterministic, TheSameSeedWritesTheSameTrace) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string a = (dir / "dist_trace_a.json").string(), b = (dir / "dist_trace_b.json").string();
  auto cluster = deterministic(3, 11);
  cluster.trace = a;
  interleaving(cluster);
  cluster.trace = b;
  interleaving(cluster);
  const std::string ta = read_file(a), tb = read_file(b);
  EXPECT_FALSE(ta.empty());
  EXPECT_EQ(ta, tb);
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

TEST(Deterministic, CollectivesAndErrorsBehaveAsInConcurrentMode) {
  const auto out = dist::sim::run(deterministic(5, 3), [] {
    std::vector<double> v{double(dist::get_rank()), 1.5};
    dist::all_reduce(v, "mean");
    auto all = dist::all_gather(std::vector<int>{dist::get_rank()});
    return v[0] + all[4][0];
  });
  EXPECT_EQ(out, std::vector<double>(5, 2.0 + 4.0));
  const auto e = sim_test::failure_of(deterministic(4, 5),
                                      [] { dist::master_only([] { dist::barrier(); })(); });
  EXPECT_TRUE(e.failed_with<dist::DeadlockError>(0));
  EXPECT_THAT(e.what(), HasSubstr(".seed = 5, .schedule = deterministic"));
}

TEST(Deterministic, ATimeoutOfThirtyMinutesCostsNoRealTime) {
  auto cluster = deterministic(2, 1);
  cluster.timeout = std::chrono::minutes(30);
  cluster.faults = {Fault::stall(1, 1, std::chrono::hours(1))};
  const auto start = std::chrono::steady_clock::now();
  const auto e = sim_test::failure_of(cluster, [] {
    std::vector<float> v(2);
    dist::all_reduce(v);
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_TRUE(e.failed_with<dist::TimeoutError>(0)) << e.what();
  EXPECT_THAT(e.what(), HasSubstr("timed out after 1800000 ms"));
  EXPECT_FALSE(e.outcomes()[1].ok());  // it arrives after rank 0 gave up
}

TEST(Deterministic, AStallShorterThanTheTimeoutIsOnlyAWait) {
  auto cluster = deterministic(3, 2);
  cluster.faults = {Fault::stall(2, 1, std::chrono::minutes(4))};  // the timeout is 5 min
  const auto sums = dist::sim::run(cluster, [] {
    std::vector<int> v{1};
    dist::all_reduce(v);
    return v[0];
  });
  EXPECT_EQ(sums, (std::vector<int>{3, 3, 3}));
}

class Faults : public ::testing::TestWithParam<Schedule> {};

TEST_P(Faults, KillingRank2AtItsThirdCallFailsEveryOtherRankNamingIt) {
  Cluster cluster{.nodes = 1, .ranks_per_node = 4, .schedule = GetParam()};
  cluster.faults = {Fault::kill(2, 3)};
  int calls_on_2 = 0;
  int rank_threads_during = 0;
  const auto e = sim_test::failure_of(cluster, [&] {
    for (int i = 0; i < 5; ++i) {
      std::vector<int> v{1};
      if (dist::get_rank() == 2) ++calls_on_2;
      dist::all_reduce(v);
      if (i == 0 && dist::get_rank() == 0) rank_threads_during = rank_thread_count();
    }
  });
  // Deterministic ranks are fibers of the calling thread: no rank thread to leave behind.
  EXPECT_EQ(rank_threads_during, GetParam() == Schedule::deterministic ? 0 : 4)
      << "the check below would not see a rank thread";
  EXPECT_EQ(calls_on_2, 3);
  EXPECT_THAT(e.outcomes()[2].message, HasSubstr("killed by an injected fault at its call #3"));
  for (int r : {0, 1, 3}) {
    ASSERT_TRUE(e.failed_with<dist::RankFailure>(r)) << e.what();
    try {
      std::rethrow_exception(e.outcomes()[static_cast<std::size_t>(r)].error);
    } catch (const dist::RankFailure& f) {
      EXPECT_EQ(f.failed_rank(), 2);
    }
  }
  EXPECT_EQ(rank_threads_left(), 0) << "a rank thread was left behind";
}

TEST_P(Faults, AFailedCollectiveRaisesBackendErrorOnEveryParticipant) {
  Cluster cluster{.nodes = 1, .ranks_per_node = 3, .schedule = GetParam()};
  cluster.faults = {Fault::fail(1, 2, "NCCL error: unhandled cuda error")};
  const auto e = sim_test::failure_of(cluster, [] {
    std::vector<int> v{1};
    dist::all_reduce(v);
    dist::broadcast(v, 0);
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(e.failed_with<dist::BackendError>(r)) << e.what();
    EXPECT_THAT(e.outcomes()[static_cast<std::size_t>(r)].message,
                HasSubstr("broadcast(src=0, int32 x 1) on world #2 failed on rank 1: NCCL error"));
  }
}

INSTANTIATE_TEST_SUITE_P(BothSchedules, Faults,
                         ::testing::Values(Schedule::concurrent, Schedule::deterministic));

TEST(Trace, ADeadlockedRunKeepsAValidTraceShowingEachRanksLastCall) {
  const std::string path = (std::filesystem::temp_directory_path() / "dist_deadlock.json").string();
  auto cluster = deterministic(3, 4);
  cluster.trace = path;
  sim_test::failure_of(cluster, [] {
    std::vector<int> v{dist::get_rank()};
    dist::all_reduce(v);
    std::vector<int> peer(1);
    dist::send(v, (dist::get_rank() + 1) % 3);  // every rank sends first: nobody receives
    dist::recv(peer, (dist::get_rank() + 2) % 3);
  });
  const auto json = nlohmann::json::parse(read_file(path));
  std::filesystem::remove(path);
  std::map<int, nlohmann::json> last;  // by rank: the slice that ends last
  for (const auto& e : json.at("traceEvents"))
    if (e.at("ph") == "X") last[e.at("tid").get<int>()] = e;
  ASSERT_EQ(last.size(), 3u);
  for (const auto& [rank, e] : last) {
    EXPECT_EQ(e.at("name"), "send") << rank;
    EXPECT_EQ(e.at("args").at("outcome"), "DeadlockError") << rank;
    EXPECT_THAT(e.at("args").at("call").get<std::string>(), HasSubstr("send(dst="));
  }
}

TEST(Trace, PointToPointMessagesGetFlowArrows) {
  const std::string path = (std::filesystem::temp_directory_path() / "dist_flow.json").string();
  Cluster cluster{.nodes = 1, .ranks_per_node = 2, .trace = path};
  dist::sim::run(cluster, [] {
    std::vector<float> v(16);
    if (dist::get_rank() == 0) dist::send(v, 1, 5);
    else dist::recv(v, 0, 5);
  });
  const auto json = nlohmann::json::parse(read_file(path));
  std::filesystem::remove(path);
  int starts = 0, finishes = 0;
  for (const auto& e : json.at("traceEvents")) {
    if (e.at("ph") == "s") {
      ++starts;
      EXPECT_EQ(e.at("tid"), 0);
    }
    if (e.at("ph") == "f") {
      ++finishes;
      EXPECT_EQ(e.at("tid"), 1);
    }
  }
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(finishes, 1);
}

}  // namespace
