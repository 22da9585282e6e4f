// The same workload program on sim and on gloo under distrun -n 2, 3, 4: every rank's lines must
// be identical (exact floats on exact-sum inputs). And one gloo process killed mid-run: every
// other one exits with an error naming it, within the timeout, and distrun exits non-zero.
#include <gtest/gtest.h>

#include <signal.h>

#include "real/launch/tests/command.hpp"

namespace {

using namespace std::chrono_literals;
using launch_test::rank_lines;
using launch_test::run_command;

TEST(SimAndGlooAgree, OnEveryCollectiveAndHelperUnderDistrun) {
  for (const int n : {2, 3, 4}) {
    const auto sim = run_command({WORKLOAD_PATH, "--launcher", "sim", "-n", std::to_string(n)}, 60s);
    ASSERT_EQ(sim.exit_code(), 0) << sim.err;
    const auto gloo = run_command({DISTRUN_PATH, "-n", std::to_string(n), "--", WORKLOAD_PATH,
                                   "--launcher", "pytorch"}, 60s);
    ASSERT_EQ(gloo.exit_code(), 0) << gloo.out << gloo.err;
    for (int rank = 0; rank < n; ++rank) {
      const auto expected = rank_lines(sim.out, rank);
      ASSERT_GT(expected.size(), 20u) << sim.out;
      EXPECT_EQ(expected.back(), "done");
      EXPECT_EQ(rank_lines(gloo.out, rank), expected) << "world of " << n << ", rank " << rank;
    }
    EXPECT_NE(sim.out.find("[0] master_only: 1 call(s) in all, here value 1"), std::string::npos);
    EXPECT_NE(gloo.out.find("[1] barrier: no rank left before all arrived yes"), std::string::npos);
  }
}

launch_test::CommandResult kill_one(int n, int victim, bool fan_in) {
  return run_command({DISTRUN_PATH, "-n", std::to_string(n), "--stop-delay", "30", "--",
                      WORKLOAD_PATH, "--launcher", "pytorch", "--timeout-ms", "10000", "--kill-rank",
                      std::to_string(victim), "--kill-step", "2", "--fan-in", fan_in ? "yes" : "no"},
                     60s);
}

// The rank a survivor's last stderr line says it lost, -1 when it is not a RankFailure report.
int named_rank(const launch_test::CommandResult& r, int rank) {
  const auto lines = rank_lines(r.err, rank);
  const std::string head = "workload: RankFailure (lost rank ";
  if (lines.empty() || lines.back().rfind(head, 0) != 0) return -1;
  return std::stoi(lines.back().substr(head.size()));
}

void expect_killed_and_survivors_failed(const launch_test::CommandResult& r, int n, int victim) {
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code(), 128 + SIGKILL) << r.err;
  // 10 s of collective timeout, up to 5 s more where rank 0 keeps the store up for the others to
  // record, and process start-up under sanitizers on a loaded machine: well under distrun's 30 s.
  EXPECT_LT(r.elapsed, 25s) << "the survivors must fail on their own, before distrun's 30 s stop";
  EXPECT_NE(r.err.find("distrun: rank " + std::to_string(victim) + ": killed by signal 9"),
            std::string::npos) << r.err;
  for (int rank = 0; rank < n; ++rank) {
    if (rank == victim) continue;
    // It exited on its own (status 1), long before distrun's 30 s stop delay.
    EXPECT_NE(r.err.find("distrun: rank " + std::to_string(rank) + ": exit status 1\n"),
              std::string::npos) << r.err;
  }
}

// Every survivor waits on the victim alone when it dies: each one names it.
TEST(SimAndGlooAgree, AKilledGlooProcessIsNamedByEveryOther) {
  for (const int victim : {2, 0}) {  // 0 hosts the store
    const auto r = kill_one(4, victim, true);
    expect_killed_and_survivors_failed(r, 4, victim);
    for (int rank = 0; rank < 4; ++rank) {
      if (rank == victim) continue;
      EXPECT_EQ(named_rank(r, rank), victim) << "rank " << rank << ":\n" << r.err;
    }
  }
}

// Killed in the middle of tree-shaped collectives (broadcast, reduce), where survivors also wait on
// each other: a survivor that loses another survivor follows the failure records to the victim
// (the store's host keeps them until every survivor has read them), or, when the victim was the
// store's host, reads the vanished store as its loss.
TEST(SimAndGlooAgree, AKilledGlooProcessInACollectiveIsNamedByEveryOther) {
  const int n = 4;
  for (const int victim : {2, 0, 2, 0}) {
    const auto r = kill_one(n, victim, false);
    expect_killed_and_survivors_failed(r, n, victim);
    for (int rank = 0; rank < n; ++rank) {
      if (rank == victim) continue;
      EXPECT_EQ(named_rank(r, rank), victim) << "rank " << rank << ":\n" << r.err;
    }
  }
}

}  // namespace
