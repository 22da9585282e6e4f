// distrun's option parsing, rank environment and line prefixing, as plain functions.
#include "real/launch/options.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "real/launch/environment.hpp"
#include "real/launch/line_prefixer.hpp"

namespace {

using dist::launch::Options;
using dist::launch::parse_options;
using dist::launch::UsageError;

TEST(DistrunOptions, ParsesFlagsAndTheProgram) {
  const Options o =
      parse_options({"-n", "4", "--master-port=29500", "--grace", "1.5", "--stop-delay=2",
                     "--max-restarts", "3", "--", "prog", "-n", "--x"});
  EXPECT_EQ(o.nproc, 4);
  EXPECT_EQ(o.max_restarts, 3);
  EXPECT_EQ(o.master_port, 29500);
  EXPECT_EQ(o.grace, std::chrono::milliseconds(1500));
  EXPECT_EQ(o.stop_delay, std::chrono::milliseconds(2000));
  EXPECT_EQ(o.command, (std::vector<std::string>{"prog", "-n", "--x"}));
}

TEST(DistrunOptions, TheProgramMayFollowWithoutDoubleDash) {
  const Options o = parse_options({"--nproc-per-node", "2", "prog", "--flag"});
  EXPECT_EQ(o.nproc, 2);
  EXPECT_EQ(o.command, (std::vector<std::string>{"prog", "--flag"}));
  EXPECT_FALSE(o.master_port.has_value());
  EXPECT_EQ(o.master_addr, "127.0.0.1");
}

TEST(DistrunOptions, RejectsBadValues) {
  EXPECT_THROW(parse_options({"-n", "2", "--master-port", "70000", "p"}), UsageError);
  EXPECT_THROW(parse_options({"-n", "2", "--grace", "-1", "p"}), UsageError);
  EXPECT_THROW(parse_options({"-n", "2", "--grace", "1s", "p"}), UsageError);
  EXPECT_THROW(parse_options({"-n", "2", "--master-addr=", "p"}), UsageError);
  EXPECT_THROW(parse_options({"-n", "2", "--max-restarts", "-1", "p"}), UsageError);
  EXPECT_THROW(parse_options({"-n", "2", "--max-restarts", "x", "p"}), UsageError);
  EXPECT_THROW(parse_options({
                   "-n",
                   "2",
                   "--",
               }),
               UsageError);
  EXPECT_TRUE(parse_options({"--help"}).help);
}

TEST(DistrunEnvironment, GlobalRanksOfANode) {
  Options o;
  o.nproc = 4;
  o.nnodes = 2;
  o.node_rank = 1;
  o.master_addr = "host0";
  const auto env = dist::launch::rank_environment(o, 3, 1234, 2);
  const dist::launch::EnvVars expected{
      {"RANK", "7"},           {"WORLD_SIZE", "8"},
      {"LOCAL_RANK", "3"},     {"LOCAL_WORLD_SIZE", "4"},
      {"GROUP_RANK", "1"},     {"MASTER_ADDR", "host0"},
      {"MASTER_PORT", "1234"}, {"TORCHELASTIC_RESTART_COUNT", "2"}};
  EXPECT_EQ(env, expected);
}

TEST(DistrunEnvironment, EachSingleNodeJobGetsItsOwnRandomSecret) {
  ::unsetenv("DIST_STORE_SECRET");
  Options o;
  o.nproc = 2;
  const std::string a = dist::launch::job_secret(o), b = dist::launch::job_secret(o);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
  o.nnodes = 2;  // every node's distrun would draw another: refused unless given or waived
  try {
    dist::launch::job_secret(o);
    ADD_FAILURE() << "a multi-node job ran without a secret";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("DIST_STORE_SECRET or give --secret-file"),
              std::string::npos)
        << e.what();
  }
  ::setenv("DIST_STORE_SECRET", "given-on-every-node", 1);
  EXPECT_EQ(dist::launch::job_secret(o), "given-on-every-node");
  ::unsetenv("DIST_STORE_SECRET");
  o.no_secret = true;
  EXPECT_EQ(dist::launch::job_secret(o), "");
}

TEST(DistrunEnvironment, ASecretFileGivesTheFirstLine) {
  const std::string path = ::testing::TempDir() + "distrun_secret";
  std::ofstream(path) << "from-a-file-0123 \nsecond line\n";
  Options o = parse_options(
      {"-n", "1", "--nnodes", "2", "--master-port", "5", "--secret-file", path, "prog"});
  EXPECT_EQ(dist::launch::job_secret(o), "from-a-file-0123");
  std::ofstream(path) << "\n";
  EXPECT_THROW(dist::launch::job_secret(o), std::runtime_error);
  o.secret_file = path + ".missing";
  EXPECT_THROW(dist::launch::job_secret(o), std::runtime_error);
  EXPECT_TRUE(parse_options({"-n", "1", "--no-secret", "prog"}).no_secret);
  EXPECT_THROW(parse_options({"-n", "1", "--no-secret", "--secret-file", path, "prog"}),
               UsageError);
}

TEST(LinePrefixer, SplitsChunksIntoWholePrefixedLines) {
  std::vector<std::string> got;
  dist::launch::LinePrefixer p(
      "[3] ", [&](std::string_view s) { got.emplace_back(s); }, 8);
  p.feed("ab");
  p.feed("c\nde\n\nf");
  EXPECT_EQ(got, (std::vector<std::string>{"[3] abc\n", "[3] de\n", "[3] \n"}));
  p.feed("0123456789ABCDEFGH");  // longer than max_line 8: emitted in pieces
  EXPECT_EQ(got.size(), 5u);
  EXPECT_EQ(got[3], "[3] f0123456\n");
  EXPECT_EQ(got[4], "[3] 789ABCDE\n");
  p.finish();
  EXPECT_EQ(got.back(), "[3] FGH\n");
  p.finish();
  EXPECT_EQ(got.size(), 6u);
}

}  // namespace
