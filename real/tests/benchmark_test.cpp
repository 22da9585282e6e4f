// <dist/benchmark.hpp>: the slowest rank's time, the bandwidth counters and a failing step's
// error, through Google Benchmark's own runner, on sim ranks and (with gloo) forked processes.
#include "dist/bench/benchmark.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using dist::bench::Options;
using dist::bench::Pattern;
using Run = benchmark::BenchmarkReporter::Run;

// Keeps the runs Google Benchmark reports, prints nothing.
class Collect : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& reported) override {
    runs.insert(runs.end(), reported.begin(), reported.end());
  }
  std::vector<Run> runs;
};

// Runs the registered benchmarks whose name matches `filter` (a regex) and returns their runs.
std::vector<Run> run_matching(const std::string& filter) {
  Collect collect;
  benchmark::RunSpecifiedBenchmarks(&collect, filter);
  return collect.runs;
}

Options on_processes(int ranks) {
  return {.ranks = ranks,
          .on = Options::On::processes,
          .timeout = std::chrono::seconds(30),
          .deadline = std::chrono::seconds(60)};
}

// A step where rank 1 sleeps 2 ms longer than the others: every iteration takes at least 2 ms.
void slow_rank_one() {
  dist::barrier();
  if (dist::get_rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

void expect_slowest_rank(const std::string& name) {
  const auto runs = run_matching("^" + name + "/");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(runs[0].error_occurred) << runs[0].error_message;
  EXPECT_EQ(runs[0].iterations, 3);
  // Manual time: the sum of the iterations' slowest-rank times.
  EXPECT_GE(runs[0].real_accumulated_time / 3, 2e-3);
  EXPECT_EQ(runs[0].counters.at("ranks").value, 2);
}

TEST(DistBenchmark, IterationTimeIsTheSlowestRanksOnSim) {
  dist::bench::register_distributed("slowest", slow_rank_one, {.ranks = 2})->Iterations(3);
  expect_slowest_rank("slowest/sim/ranks:2");
}

TEST(DistBenchmark, SlowestPerIterationIsTheMaximumOverRanks) {
  const auto slowest =
      dist::bench::detail::slowest_per_iteration({{1, 5, 2}, {4, 3, 2}, {0, 0, 7}});
  EXPECT_EQ(slowest, (std::vector<double>{4, 5, 7}));
}

TEST(DistBenchmark, BusbwFactorsAreNcclTests) {
  using dist::bench::busbw_factor;
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::all_reduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::all_gather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::reduce_scatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::reduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("all_reduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("all_to_all", 2), 0.5);
  const auto bw = dist::bench::detail::bandwidth(1 << 20, 1e-3, Pattern::all_reduce, 4);
  EXPECT_DOUBLE_EQ(bw.algbw, 1.048576);  // GB/s
  EXPECT_DOUBLE_EQ(bw.busbw, 1.048576 * 1.5);
}

// The counters of a run: algbw = bytes over the mean iteration time, busbw with the pattern's
// factor, none without bytes.
TEST(DistBenchmark, CountersFollowBytesPatternAndRanks) {
  const auto step = [] {
    dist::barrier();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  dist::bench::register_distributed("counters", step,
                                    {.ranks = 4, .bytes = 1 << 20, .pattern = Pattern::all_gather})
      ->Iterations(2);
  dist::bench::register_distributed("counters_algbw_only", step, {.ranks = 2, .bytes = 1000})
      ->Iterations(2);
  dist::bench::register_distributed("counters_none", step, {.ranks = 2})->Iterations(2);
  const auto runs = run_matching("^counters");
  ASSERT_EQ(runs.size(), 3u);
  const auto& c = runs[0].counters;
  const double per_iteration = runs[0].real_accumulated_time / 2;
  EXPECT_NEAR(c.at("algbw").value, (1 << 20) / per_iteration / 1e9, 1e-9);
  EXPECT_NEAR(c.at("busbw").value, c.at("algbw").value * 0.75, 1e-9);
  EXPECT_EQ(c.at("bytes").value, 1 << 20);
  EXPECT_EQ(c.at("ranks").value, 4);
  EXPECT_TRUE(runs[1].counters.count("algbw"));
  EXPECT_FALSE(runs[1].counters.count("busbw"));
  EXPECT_FALSE(runs[2].counters.count("algbw"));
}

// Rank 1 throws at its second step: the run reports the error with rank 1's message instead of
// leaving rank 0 in the next barrier.
void fails_on_rank_one() {
  thread_local int calls = 0;
  if (dist::get_rank() == 1 && ++calls == 2) throw std::runtime_error("the step broke");
  dist::barrier();
}

void expect_failure_reported(const std::string& name) {
  const auto start = std::chrono::steady_clock::now();
  const auto runs = run_matching("^" + name + "/");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].error_occurred);
  EXPECT_NE(runs[0].error_message.find("the step broke"), std::string::npos)
      << runs[0].error_message;
  EXPECT_NE(runs[0].error_message.find("rank 1"), std::string::npos) << runs[0].error_message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(DistBenchmark, FailingStepIsAnErrorOnSim) {
  dist::bench::register_distributed("failing", fails_on_rank_one, {.ranks = 2})->Iterations(5);
  expect_failure_reported("failing/sim/ranks:2");
}

// Both forms give each rank its own step: the step form a copy of the lambda (its captured
// counter), the setup form what the setup built on that rank. Every rank counts 1 + 4 steps.
TEST(DistBenchmark, EachRankRunsItsOwnStep) {
  std::vector<int> copies(2, 0), built(2, 0);
  const auto count_into = [](std::vector<int>& seen) {
    return [&seen, count = 0]() mutable {
      seen[static_cast<std::size_t>(dist::get_rank())] = ++count;
    };
  };
  dist::bench::register_distributed("own_step_copy", count_into(copies), {.ranks = 2})
      ->Iterations(4);
  dist::bench::register_distributed("own_step_setup", [&] { return count_into(built); },
                                    {.ranks = 2})
      ->Iterations(4);
  const auto runs = run_matching("^own_step_");
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& run : runs) EXPECT_FALSE(run.error_occurred) << run.error_message;
  EXPECT_EQ(copies, (std::vector<int>{5, 5}));  // warm-up + 4
  EXPECT_EQ(built, (std::vector<int>{5, 5}));
}

TEST(DistBenchmark, InconsistentOptionsAreInvalidArguments) {
  const auto step = [] {};
  EXPECT_THROW(dist::bench::register_distributed("bad", step, {.ranks = 0}), dist::InvalidArgument);
  EXPECT_THROW(dist::bench::register_distributed(
                   "bad", step, {.ranks = 3, .cluster = dist::sim::Cluster{.ranks_per_node = 2}}),
               dist::InvalidArgument);
  auto processes = on_processes(2);
  processes.backend = dist::Backend::sim;
  EXPECT_THROW(dist::bench::register_distributed("bad", step, processes), dist::InvalidArgument);
}

TEST(DistBenchmark, IterationTimeIsTheSlowestRanksOnGlooProcesses) {
  if (!dist::is_gloo_available()) GTEST_SKIP() << "dist was built without gloo";
  dist::bench::register_distributed("slowest_processes", slow_rank_one, on_processes(2))
      ->Iterations(3);
  expect_slowest_rank("slowest_processes/gloo/processes:2");
}

TEST(DistBenchmark, FailingStepIsAnErrorOnGlooProcesses) {
  if (!dist::is_gloo_available()) GTEST_SKIP() << "dist was built without gloo";
  dist::bench::register_distributed("failing_processes", fails_on_rank_one, on_processes(2))
      ->Iterations(5);
  expect_failure_reported("failing_processes/gloo/processes:2");
}

// A rank stuck past the deadline: the processes are killed and the run reports the timeout.
TEST(DistBenchmark, StuckProcessesAreKilledAtTheDeadline) {
  if (!dist::is_gloo_available()) GTEST_SKIP() << "dist was built without gloo";
  auto options = on_processes(2);
  options.deadline = std::chrono::seconds(2);
  const auto stuck_rank_one = [] {
    if (dist::get_rank() == 1) std::this_thread::sleep_for(std::chrono::minutes(5));
    dist::barrier();
  };
  dist::bench::register_distributed("stuck_processes", stuck_rank_one, options)->Iterations(1);
  const auto start = std::chrono::steady_clock::now();
  const auto runs = run_matching("^stuck_processes/");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].error_occurred);
  EXPECT_NE(runs[0].error_message.find("deadline"), std::string::npos) << runs[0].error_message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
