// The call layer's diagnoses, end to end: examples/diagnose runs one classic bug on 3 ranks, on
// sim and as real processes (gloo under distrun, mpi under mpirun), without DIST_DEBUG. Every
// surviving rank gets the named error within the timeout plus the roll-call window, and a desync
// reads on gloo as on sim: the same first line, and every call sim lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "real/launch/tests/command.hpp"

namespace {

using namespace std::chrono_literals;
using launch_test::rank_lines;
using launch_test::run_command;

constexpr int ranks = 3;
constexpr auto timeout = 1000ms;  // the job's; the roll-call window is min(3 s, timeout)
constexpr auto limit = 60s;

launch_test::CommandResult on_sim(const std::string& bug) {
  return run_command({DIAGNOSE_PATH, "--bug", bug}, limit);
}

launch_test::CommandResult on_gloo(const std::string& bug) {
  return run_command(
      {DISTRUN_PATH, "-n", std::to_string(ranks), "--stop-delay", "30", "--", DIAGNOSE_PATH,
       "--bug", bug, "--launcher", "pytorch", "--timeout-ms", std::to_string(timeout.count())},
      limit);
}

// Rank `rank`'s lines, joined.
std::string text_of(const launch_test::CommandResult& r, int rank) {
  std::string out;
  for (const auto& line : rank_lines(r.out, rank)) out += line + "\n";
  return out;
}

// What the survivors must see, bug by bug, the time it may take aside: the timeout, the window,
// the processes' start and the diagnosis's store requests.
void expect_in_time(const launch_test::CommandResult& r) {
  EXPECT_FALSE(r.timed_out) << r.out << r.err;
  EXPECT_LT(r.elapsed, timeout * 2 + 6s) << r.out << r.err;
}

// The desync bugs: every rank of the real run says what sim says.
class SameWords : public ::testing::TestWithParam<const char*> {};

TEST_P(SameWords, AsSimOnEveryRankOfAGlooJob) {
  const auto sim = on_sim(GetParam());
  ASSERT_EQ(sim.exit_code(), 0) << sim.err;
  const auto real = on_gloo(GetParam());
  expect_in_time(real);
  for (int rank = 0; rank < ranks; ++rank) {
    const auto expected = rank_lines(sim.out, rank), got = rank_lines(real.out, rank);
    ASSERT_FALSE(expected.empty()) << sim.out;
    ASSERT_EQ(expected.front().rfind("DesyncError: collective on world #2: ranks disagree on '", 0),
              0u)
        << sim.out;
    ASSERT_FALSE(got.empty()) << "rank " << rank << ":\n" << real.out << real.err;
    EXPECT_EQ(got.front(), expected.front()) << "rank " << rank << ":\n" << real.out;
    // The calls it lists (all ranks', or the two compared) read as sim's for the ranks sim lists.
    int listed = 0;
    for (const auto& line : got) {
      if (line.rfind("  rank ", 0) != 0) continue;
      ++listed;
      const std::string who = line.substr(0, line.find(" called ") + 8);
      const auto sim_line =
          std::find_if(expected.begin(), expected.end(),
                       [&](const std::string& l) { return l.rfind(who, 0) == 0; });
      if (sim_line == expected.end()) continue;
      EXPECT_EQ(line, *sim_line) << "rank " << rank << "\n" << sim.out;
    }
    EXPECT_GE(listed, 2) << real.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Bugs, SameWords,
                         ::testing::Values("kind", "dtype", "count", "root", "op", "reduce_scatter",
                                           "skip"));

TEST(Diagnosis, GlooNamesWhereARankOnAnotherGroupIs) {
  const auto r = on_gloo("group");
  expect_in_time(r);
  for (const int rank : {0, 2})
    EXPECT_NE(text_of(r, rank).find(
                  "TimeoutError: all_reduce(op=sum, float32 x 4) on world #2 timed out after 1000 "
                  "ms: rank 1 is in all_reduce(op=sum, float32 x 4) on group {0, 1} #1"),
              std::string::npos)
        << r.out;
  EXPECT_NE(text_of(r, 1).find("on group {0, 1} #1 timed out after 1000 ms: rank 0 is in "
                               "all_reduce(op=sum, float32 x 4) on world #2"),
            std::string::npos)
      << r.out;
}

TEST(Diagnosis, GlooNamesARankAsleepOutsideDist) {
  const auto r = on_gloo("asleep");
  EXPECT_FALSE(r.timed_out);
  for (const int rank : {0, 1}) {
    const std::string text = text_of(r, rank);
    EXPECT_NE(text.find("TimeoutError: all_reduce(op=sum, float32 x 4) on world #2 timed out after "
                        "1000 ms: rank 2 completed call #1 (all_reduce(op=sum, float32 x 4)) "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(" ago and has not called since; ranks 0, 1 wait in call #2 "
                        "(all_reduce(op=sum, float32 x 4))"),
              std::string::npos)
        << text;
  }
}

TEST(Diagnosis, GlooNamesAKilledRank) {
  const auto r = on_gloo("killed");
  expect_in_time(r);
  for (const int rank : {0, 1}) {
    const std::string text = text_of(r, rank);
    EXPECT_EQ(text.rfind("RankFailure: all_reduce(op=sum, float32 x 4) on world #2: ", 0), 0u)
        << text;
    EXPECT_NE(text.find("lost rank 2"), std::string::npos) << text;
  }
}

// A README line against a printed one: "..." in the README stands for any text, and the seconds
// in "2.0 s ago" for any.
bool same_line(std::string readme, std::string printed) {
  static const std::regex seconds("[0-9]+\\.[0-9] s ago");
  readme = std::regex_replace(readme, seconds, "N s ago");
  printed = std::regex_replace(printed, seconds, "N s ago");
  const auto dots = readme.find("...");
  if (dots == std::string::npos) return readme == printed;
  const std::string head = readme.substr(0, dots), tail = readme.substr(dots + 3);
  return printed.size() >= head.size() + tail.size() && printed.rfind(head, 0) == 0 &&
         printed.compare(printed.size() - tail.size(), tail.size(), tail) == 0;
}

// Whether rank 0's lines of `out` read as `expected` (README lines).
bool reads_as(const std::vector<std::string>& expected, const std::string& out) {
  const auto got = rank_lines(out, 0);
  if (got.size() != expected.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same_line(expected[i], got[i])) return false;
  return true;
}

// The README's "When a real job fails" block: each "$ " command, run here, prints rank 0's lines
// as shown. A gloo job is run up to three times: on a loaded machine one rank's timeout can come
// more than the roll-call window after another's, and the diagnosis then takes its other true
// form (the late rank counted absent, "(rank 1 is in call #2 (...), which failed there too)"),
// as SameWords allows. The README shows the form of a run whose ranks time out together.
TEST(Diagnosis, TheReadmeShowsWhatTheProgramPrints) {
  std::ifstream file(README_PATH);
  std::stringstream text;
  text << file.rdbuf();
  const std::string readme = text.str();
  const auto section = readme.find("### When a real job fails");
  ASSERT_NE(section, std::string::npos);
  const auto begin = readme.find("```text\n", section) + 8, end = readme.find("```", begin);
  std::istringstream block(readme.substr(begin, end - begin));
  std::vector<std::pair<std::string, std::vector<std::string>>> commands;
  for (std::string line; std::getline(block, line);) {
    if (line.rfind("$ ", 0) == 0) commands.push_back({line, {}});
    else if (!commands.empty() && line.rfind("[0] ", 0) == 0)
      commands.back().second.push_back(line.substr(4));
  }
  ASSERT_EQ(commands.size(), 3u) << readme.substr(begin, end - begin);
  for (const auto& [command, expected] : commands) {
    const auto at = command.find("--bug ") + 6;
    const std::string bug = command.substr(at, command.find(' ', at) - at);
    const bool real = command.find("distrun") != std::string::npos;
    auto r = real ? on_gloo(bug) : on_sim(bug);
    for (int attempt = 1; real && attempt < 3 && !reads_as(expected, r.out); ++attempt)
      r = on_gloo(bug);
    const auto got = rank_lines(r.out, 0);
    ASSERT_EQ(got.size(), expected.size()) << command << "\n" << r.out;
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(same_line(expected[i], got[i]))
          << command << "\nREADME:  " << expected[i] << "\nprinted: " << got[i];
  }
}

#ifdef MPIRUN_PATH
// `port`: the store's, one per test (ctest runs tests side by side).
launch_test::CommandResult on_mpi(const std::string& bug, int port) {
  return run_command(
      {MPIRUN_PATH, "--allow-run-as-root", "--oversubscribe", "-n", std::to_string(ranks), "-x",
       "MASTER_ADDR=127.0.0.1", "-x", "MASTER_PORT=" + std::to_string(port), DIAGNOSE_PATH, "--bug",
       bug, "--launcher", "mpi", "--backend", "mpi", "--timeout-ms",
       std::to_string(timeout.count())},
      limit);
}

// On mpi the ranks agree on every collective before its data moves (real/mpi/sequence.hpp): each
// mismatch, and a skipped call whose successor differs from it, is the DesyncError sim raises, in
// sim's words, at once.
TEST(Diagnosis, MpiNamesMismatchedCallsOnEveryRank) {
  const std::vector<std::pair<std::string, std::string>> bugs{
      {"kind", "kind"},   {"skip", "kind"}, {"count", "count"}, {"reduce_scatter", "kind"},
      {"dtype", "dtype"}, {"op", "op"},     {"root", "src"}};
  for (const auto& [bug, field] : bugs) {
    const auto r = on_mpi(bug, MPI_PORT);
    EXPECT_FALSE(r.timed_out) << bug;
    const std::string head =
        "DesyncError: collective on world #2: ranks disagree on '" + field + "':";
    for (int rank = 0; rank < ranks; ++rank)
      EXPECT_EQ(text_of(r, rank).rfind(head, 0), 0u) << bug << ", rank " << rank << ":\n"
                                                     << r.out << r.err;
  }
}

TEST(Diagnosis, MpiNamesWhereTheMissingRankIs) {
  const auto group = on_mpi("group", MPI_PORT + 1);
  for (const int rank : {0, 2})
    EXPECT_NE(text_of(group, rank)
                  .find("rank 1 is in all_reduce(op=sum, float32 x 4) on group {0, 1} #1"),
              std::string::npos)
        << group.out << group.err;
  const auto asleep = on_mpi("asleep", MPI_PORT + 1);
  for (const int rank : {0, 1})
    EXPECT_NE(
        text_of(asleep, rank).find("rank 2 completed call #1 (all_reduce(op=sum, float32 x 4)) "),
        std::string::npos)
        << asleep.out << asleep.err;
}
#endif

}  // namespace
