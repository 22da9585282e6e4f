// distrun end to end with the probe program: the environment of each rank, prefixed output,
// failure propagation and stopping the others, SIGTERM/SIGINT forwarding, usage errors.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <set>

#include "real/launch/tests/command.hpp"

namespace {

using namespace std::chrono_literals;
using launch_test::rank_lines;
using launch_test::run_command;

std::vector<std::string> distrun(std::vector<std::string> args) {
  std::vector<std::string> command{DISTRUN_PATH};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

TEST(Distrun, SetsTheTorchrunVariablesForEachRank) {
  const auto r = run_command(distrun({"-n", "3", "--", PROBE_PATH, "--print-env"}), 20s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  std::set<std::string> ports;
  for (int rank = 0; rank < 3; ++rank) {
    const auto lines = rank_lines(r.out, rank);
    ASSERT_EQ(lines.size(), 1u) << r.out;
    const std::string expected =
        "RANK=" + std::to_string(rank) + " WORLD_SIZE=3 LOCAL_RANK=" + std::to_string(rank) +
        " LOCAL_WORLD_SIZE=3 GROUP_RANK=0 " + "MASTER_ADDR=127.0.0.1 MASTER_PORT=";
    EXPECT_EQ(lines[0].substr(0, expected.size()), expected);
    ports.insert(lines[0].substr(expected.size()));
  }
  ASSERT_EQ(ports.size(), 1u) << "every rank must see the same MASTER_PORT";
  const int port = std::stoi(*ports.begin());
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
}

TEST(Distrun, MultiNodeFlagsSetTheGlobalRanks) {
  const auto r = run_command(
      distrun({"--nnodes=3", "--node-rank", "2", "--master-addr", "10.1.2.3", "--master-port",
               "29611", "--no-secret", "-n", "2", PROBE_PATH, "--print-env"}),
      20s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(
      rank_lines(r.out, 4),
      std::vector<std::string>{
          "RANK=4 WORLD_SIZE=6 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 GROUP_RANK=2 MASTER_ADDR=10.1.2.3 "
          "MASTER_PORT=29611"});
  EXPECT_EQ(
      rank_lines(r.out, 5),
      std::vector<std::string>{
          "RANK=5 WORLD_SIZE=6 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 GROUP_RANK=2 MASTER_ADDR=10.1.2.3 "
          "MASTER_PORT=29611"});
  EXPECT_TRUE(rank_lines(r.out, 0).empty());
}

TEST(Distrun, PrefixesEveryLineOfBothStreamsWithTheRank) {
  const auto r = run_command(distrun({"-n", "2", "--", PROBE_PATH, "--lines", "50"}), 20s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::string> out, err;
    for (int i = 0; i < 50; ++i)
      out.push_back("out " + std::to_string(i)), err.push_back("err " + std::to_string(i));
    out.push_back("tail without newline");  // an unterminated last line is still emitted whole
    EXPECT_EQ(rank_lines(r.out, rank), out);
    EXPECT_EQ(rank_lines(r.err, rank), err);
  }
  // No line lacks a prefix, and none holds a second one (no interleaving within a line).
  for (const auto* text : {&r.out, &r.err}) {
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
      EXPECT_TRUE(line.starts_with("[0] ") || line.starts_with("[1] ")) << line;
      EXPECT_EQ(line.find('[', 1), std::string::npos) << line;
    }
  }
}

TEST(Distrun, AFailingRankStopsTheOthersAndItsStatusPropagates) {
  const auto r = run_command(distrun({"-n", "3", "--", PROBE_PATH, "--fail-rank", "1", "3"}), 20s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code(), 3) << r.err;
  EXPECT_LT(r.elapsed, 10s) << "the others sleep 30 s; distrun must have stopped them";
  EXPECT_NE(r.err.find("[1] failing with 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("distrun: rank 1: exit status 3 (first failure)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("distrun: rank 0: killed by signal 15"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("distrun: rank 2: killed by signal 15"), std::string::npos) << r.err;
}

// Each rank prints its restart count; rank `fails` exits 3 while its count is below `until`; the
// others sleep `sleep` seconds.
std::vector<std::string> restarting(int fails, int until, const char* sleep) {
  return {"/bin/sh", "-c",
          "echo \"restart $TORCHELASTIC_RESTART_COUNT\"; if [ \"$RANK\" = " +
              std::to_string(fails) + " ] && [ \"$TORCHELASTIC_RESTART_COUNT\" -lt " +
              std::to_string(until) + " ]; then exit 3; fi; sleep " + sleep};
}

TEST(Distrun, RestartsAFailedRankWithTheNextCountWhileTheOthersRun) {
  auto args = std::vector<std::string>{"-n", "3", "--max-restarts", "2", "--"};
  for (auto& a : restarting(1, 2, "1")) args.push_back(a);
  const auto r = run_command(distrun(args), 20s);
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(rank_lines(r.out, 1),
            (std::vector<std::string>{"restart 0", "restart 1", "restart 2"}));
  for (const int rank : {0, 2})  // never stopped nor restarted
    EXPECT_EQ(rank_lines(r.out, rank), std::vector<std::string>{"restart 0"});
  EXPECT_NE(r.err.find("failed (exit status 3); restarting it (restart 2 of 2)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("distrun: rank 1: exit status 0 (restarted 2 times)"), std::string::npos)
      << r.err;
}

TEST(Distrun, ARankOutOfRestartsStopsTheOthers) {
  auto args = std::vector<std::string>{"-n", "3", "--max-restarts", "1", "--"};
  for (auto& a : restarting(2, 100, "30")) args.push_back(a);
  const auto r = run_command(distrun(args), 20s);
  EXPECT_EQ(r.exit_code(), 3) << r.err;
  EXPECT_LT(r.elapsed, 10s) << "the others sleep 30 s; distrun must have stopped them";
  EXPECT_EQ(rank_lines(r.out, 2), (std::vector<std::string>{"restart 0", "restart 1"}));
  EXPECT_NE(r.err.find("distrun: rank 2: exit status 3 (restarted 1 time) (first failure)"),
            std::string::npos)
      << r.err;
}

TEST(Distrun, RankZeroHostsTheStoreAndIsNotRestarted) {
  auto args = std::vector<std::string>{"-n", "2", "--max-restarts", "3", "--"};
  for (auto& a : restarting(0, 100, "30")) args.push_back(a);
  const auto r = run_command(distrun(args), 20s);
  EXPECT_EQ(r.exit_code(), 3) << r.err;
  EXPECT_EQ(rank_lines(r.out, 0), std::vector<std::string>{"restart 0"});
}

TEST(Distrun, AKilledRankGives128PlusTheSignal) {
  const auto r = run_command(
      distrun({"-n", "2", "--", PROBE_PATH, "--kill-self-rank", "0", "--fail-rank", "9", "0"}),
      20s);
  EXPECT_EQ(r.exit_code(), 128 + SIGKILL) << r.err;
  EXPECT_NE(r.err.find("distrun: rank 0: killed by signal 9"), std::string::npos) << r.err;
}

// Kills rank 1 (by the pid it printed) once rank 0 has said it ignores SIGTERM, so rank 0 can
// never see the TERM before it ignores it.
launch_test::OutputHook kill_rank1_when_rank0_ignores_term() {
  return [sent = false](pid_t, const std::string& out, const std::string&) mutable {
    const auto pid_at = out.find("[1] pid ");
    if (sent || out.find("[0] ready") == std::string::npos || pid_at == std::string::npos) return;
    ::kill(static_cast<pid_t>(std::stol(out.substr(pid_at + 8))), SIGKILL);
    sent = true;
  };
}

TEST(Distrun, ARankIgnoringSigtermIsKilledAfterTheGracePeriod) {
  const auto r = run_command(
      distrun({"-n", "2", "--grace", "0.5", "--", PROBE_PATH, "--print-pid", "--ignore-term"}), 20s,
      {}, kill_rank1_when_rank0_ignores_term());
  EXPECT_EQ(r.exit_code(), 128 + SIGKILL) << r.err;
  EXPECT_LT(r.elapsed, 8s);
  EXPECT_NE(r.err.find("distrun: rank 0: killed by signal 9"), std::string::npos) << r.err;
}

// Sends `sig` to distrun once both ranks printed "ready".
launch_test::OutputHook signal_when_ready(int sig) {
  return [sig, sent = false](pid_t pid, const std::string& out, const std::string&) mutable {
    if (!sent && out.find("[0] ready") != std::string::npos &&
        out.find("[1] ready") != std::string::npos) {
      ::kill(pid, sig);
      sent = true;
    }
  };
}

TEST(Distrun, ForwardsSigtermAndSigintToEveryRank) {
  for (const int sig : {SIGTERM, SIGINT}) {
    const auto r = run_command(distrun({"-n", "2", "--", PROBE_PATH, "--wait-signal"}), 20s, {},
                               signal_when_ready(sig));
    EXPECT_FALSE(r.timed_out);
    const std::string got = "got signal " + std::to_string(sig);
    EXPECT_EQ(rank_lines(r.out, 0), (std::vector<std::string>{"ready", got})) << r.out;
    EXPECT_EQ(rank_lines(r.out, 1), (std::vector<std::string>{"ready", got})) << r.out;
    EXPECT_EQ(r.exit_code(), 128 + sig) << "the ranks exited 0, distrun was interrupted: " << r.err;
  }
}

TEST(Distrun, UsageErrorsAreClear) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--", PROBE_PATH}, "-n N (the number of processes) is required"},
      {{"-n", "2"}, "no program given"},
      {{"-n", "zero", PROBE_PATH}, "-n expects an integer, got 'zero'"},
      {{"-n", "0", PROBE_PATH}, "-n must be in 1..4096, got 0"},
      {{"-n", "2", "--bogus", "1", PROBE_PATH}, "unknown option '--bogus'"},
      {{"-n", "2", "--nnodes", "2", PROBE_PATH}, "--nnodes 2 needs --master-port"},
      {{"-n", "2", "--nnodes", "2", "--node-rank", "2", "--master-port", "1000", PROBE_PATH},
       "--node-rank must be in [0, 2), got 2"},
      {{"-n"}, "-n expects a value"},
      {{"-n", "2", "--nnodes", "2", "--master-port", "1000", PROBE_PATH},
       "--nnodes 2 needs the job's store secret, the same on every node"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_command(distrun(args), 10s);
    EXPECT_EQ(r.exit_code(), 2) << message;
    EXPECT_NE(r.err.find("distrun: " + message), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("usage: distrun -n N"), std::string::npos);
  }
}

TEST(Distrun, AProgramThatCannotRunFailsWith127) {
  const auto r = run_command(distrun({"-n", "2", "/nonexistent/program"}), 10s);
  EXPECT_EQ(r.exit_code(), 127);
  EXPECT_NE(r.err.find("cannot execute '/nonexistent/program'"), std::string::npos) << r.err;
}

}  // namespace
