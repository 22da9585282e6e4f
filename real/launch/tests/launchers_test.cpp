// The launchers MMEngine supports, run for real: srun from Debian's slurm-wlm (on a one-node
// Slurm this test starts, testing/local_slurm.hpp) through init_dist's slurm launcher, and
// torchrun from Debian's python3-torch through its pytorch launcher, each running the quick-start
// program on gloo. Each skips, saying why, where its packages are missing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "real/launch/tests/command.hpp"
#include "testing/local_slurm.hpp"
#include "testing/ports.hpp"

namespace {

using namespace std::chrono_literals;
using launch_test::run_command;

bool installed(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

TEST(Launchers, SrunRunsAJobThroughTheSlurmLauncher) {
  if (const std::string why = test_support::LocalSlurm::unavailable(); !why.empty())
    GTEST_SKIP() << "no local Slurm: " << why;
  test_support::LocalSlurm slurm;
  auto env = slurm.env();
  env.emplace_back("MASTER_PORT", std::to_string(test_support::free_port()));
  const auto r = run_command(
      {"srun", "-n", "4", "-O", "--kill-on-bad-exit=1", QUICKSTART_PATH, "--launcher", "slurm"},
      90s, env);
  ASSERT_FALSE(r.timed_out) << r.out << r.err;
  EXPECT_EQ(r.exit_code(), 0) << r.out << r.err;
  EXPECT_NE(r.out.find("quickstart: 4 ranks OK (slurm launcher, gloo backend)"), std::string::npos)
      << r.out << r.err;
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_NE(r.out.find("rank " + std::to_string(rank) + "/4 (node 0, local " +
                         std::to_string(rank) + "): sum 6, mean 1"),
              std::string::npos)
        << r.out;
}

// torchrun's agent holds MASTER_PORT with its own store, so dist's goes to MASTER_PORT + 1.
// Debian's torch 1.13 under Python 3.11 cannot parse the default --redirects/--tee of 0
// (Python 3.11 no longer lists a flag enum's zero member), so the test names stdout for both.
TEST(Launchers, TorchrunRunsAJobThroughThePytorchLauncher) {
  if (!installed("torchrun") ||
      std::system("/usr/bin/python3 -c 'import torch.distributed.run' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "torchrun (Debian's python3-torch) is not installed";
  const int port = test_support::free_port();
  const auto r = run_command(
      {"torchrun", "--no_python", "--redirects", "1", "--tee", "1", "--nproc_per_node", "2",
       "--master_port", std::to_string(port), QUICKSTART_PATH, "--launcher", "pytorch"},
      90s);
  ASSERT_FALSE(r.timed_out) << r.out << r.err;
  EXPECT_EQ(r.exit_code(), 0) << r.out << r.err;
  EXPECT_NE(r.out.find("quickstart: 2 ranks OK (pytorch launcher, gloo backend)"),
            std::string::npos)
      << r.out << r.err;
  EXPECT_NE(r.out.find("rank 1/2 (node 0, local 1): sum 1, mean 0"), std::string::npos) << r.out;
}

}  // namespace
