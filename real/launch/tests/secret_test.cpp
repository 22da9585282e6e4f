// The per-job store secret end to end: distrun draws one and gives it to its ranks, a 2-rank gloo
// job initializes and runs a collective with it, a stranger connecting to the job's store without
// it (or with a wrong one) is refused naming DIST_STORE_SECRET, and a secret already in distrun's
// environment is the one the ranks get.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <string>

#include "real/launch/tests/command.hpp"

namespace {

using namespace std::chrono_literals;
using launch_test::rank_lines;
using launch_test::run_command;

launch_test::CommandResult secret_job(const dist::launch::EnvVars& env) {
  return run_command({DISTRUN_PATH, "-n", "2", "--", WORKLOAD_PATH, "--launcher", "pytorch",
                      "--timeout-ms", "4000", "--secret-check", "yes"},
                     20s, env);
}

// The secret a rank printed ("" when it printed none).
std::string secret_of(const launch_test::CommandResult& r, int rank) {
  for (const auto& line : rank_lines(r.out, rank))
    if (line.rfind("secret: ", 0) == 0) return line.substr(8);
  return "";
}

bool has_line(const launch_test::CommandResult& r, int rank, const std::string& line) {
  const auto lines = rank_lines(r.out, rank);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(DistrunSecret, RanksShareAGeneratedSecretAndTheStoreRefusesStrangers) {
  ::unsetenv("DIST_STORE_SECRET");
  const auto r = secret_job({});
  ASSERT_FALSE(r.timed_out) << r.out << r.err;
  ASSERT_EQ(r.exit_code(), 0) << r.out << r.err;
  EXPECT_LT(r.elapsed, 5s);
  EXPECT_TRUE(has_line(r, 0, "all_reduce: 3")) << r.out;
  EXPECT_TRUE(has_line(r, 1, "all_reduce: 3")) << r.out;
  const std::string secret = secret_of(r, 0);
  EXPECT_EQ(secret.size(), 32u) << r.out;
  EXPECT_TRUE(std::all_of(secret.begin(), secret.end(), [](char c) { return std::isxdigit(c); }));
  EXPECT_EQ(secret_of(r, 1), secret);
  const auto lines = rank_lines(r.out, 1);
  const auto refused = [&](const std::string& head, const std::string& why) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.rfind(head + ": refused: ", 0) == 0 && l.find(why) != std::string::npos;
    });
  };
  EXPECT_TRUE(refused("stranger with no secret", "DIST_STORE_SECRET is unset")) << r.out;
  EXPECT_TRUE(
      refused("stranger with a wrong secret", "secret (DIST_STORE_SECRET) is not the job's"))
      << r.out;
  // The ranks' lines interleave in the job's output: only the refusals themselves are read.
  for (int rank = 0; rank < 2; ++rank)
    for (const auto& line : rank_lines(r.out, rank))
      if (line.find("stranger") != std::string::npos) {
        EXPECT_EQ(line.find(secret), std::string::npos)
            << "a refusal shows the job's secret: " << line;
      }
}

TEST(DistrunSecret, ASecretInTheEnvironmentIsTheOneTheRanksGet) {
  const auto r = secret_job({{"DIST_STORE_SECRET", "given-by-the-test-0123"}});
  ASSERT_EQ(r.exit_code(), 0) << r.out << r.err;
  EXPECT_LT(r.elapsed, 5s);
  EXPECT_EQ(secret_of(r, 0), "given-by-the-test-0123") << r.out;
  EXPECT_EQ(secret_of(r, 1), "given-by-the-test-0123") << r.out;
  EXPECT_TRUE(has_line(r, 1, "all_reduce: 3")) << r.out;
  EXPECT_NE(r.out.find("stranger with no secret: refused"), std::string::npos) << r.out;
}

}  // namespace
