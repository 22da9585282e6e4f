// Errors on worlds of many ranks stay a few lines: ranks as ranges ("0-16, 18-63", "0-63 except
// 17") and ranks with the same text on one line, in sim's formatters and in whole 64-rank runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/diagnostics.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kWide = 64;
constexpr int kOddOne = 17;

std::size_t wide_line_count(const std::string& text) {
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The lines of a RunError that name ranks' outcomes (indented two spaces, not six).
std::size_t outcome_line_count(const std::string& text) {
  std::size_t n = 0;
  for (std::size_t p = text.find("\n  rank"); p != std::string::npos;
       p = text.find("\n  rank", p + 1))
    ++n;
  return n;
}

dist::sim::Cluster wide_world() {
  auto c = sim_test::world(kWide);
  c.schedule = dist::sim::Schedule::deterministic;
  return c;
}

// Every rank but kOddOne posts an all_reduce, then tells kOddOne so; kOddOne hears from each of
// them before it calls `odd_one`, so it acts after every other rank's all_reduce has arrived.
void all_post_then(const std::function<void(std::vector<float>&)>& odd_one) {
  std::vector<float> v(1, 1.0f);
  if (dist::get_rank() != kOddOne) {
    dist::Work w = dist::all_reduce_async(std::span<float>(v));
    dist::send(std::vector<int>{1}, kOddOne);
    w.wait();
    return;
  }
  std::vector<int> token(1);
  for (int r = 0; r < kWide; ++r)
    if (r != kOddOne) dist::recv(token, r);
  odd_one(v);
}

TEST(WideErrors, RankListUsesTheExceptFormOnLongLists) {
  std::vector<int> ranks;
  for (int r = 0; r < 65536; ++r)
    if (r != 17 && (r < 40000 || r > 40003)) ranks.push_back(r);
  EXPECT_EQ(dist::sim::rank_list(ranks), "0-65535 except 17, 40000-40003");
  EXPECT_EQ(dist::sim::rank_list({0, 1}), "0, 1");
  EXPECT_EQ(dist::sim::rank_list({0, 1, 2, 3, 7}), "0-3, 7");
}

TEST(WideErrors, DeadlockMessageOfDistinctActivitiesHasALinePerRank) {
  EXPECT_EQ(dist::sim::deadlock_message({"waits in barrier() on world #1 (missing: ranks 1)",
                                         "waits in recv(src=0, tag=0, int32 x 1) on world"}),
            "no rank can make progress\n"
            "  rank 0: waits in barrier() on world #1 (missing: ranks 1)\n"
            "  rank 1: waits in recv(src=0, tag=0, int32 x 1) on world");
}

TEST(WideErrors, DeadlockMessageGroupsRanksDoingTheSame) {
  const std::string waits =
      "waits in all_reduce(op=sum, float32 x 1) on world #3 (missing: ranks 17)";
  std::vector<std::string> activities(65536, waits);
  activities[17] = "returned";
  activities[65535] = "failed (boom)";
  EXPECT_EQ(dist::sim::deadlock_message(activities),
            "no rank can make progress\n"
            "  ranks 0-65534 except 17: " +
                waits +
                "\n"
                "  rank 17: returned\n"
                "  rank 65535: failed (boom)");
  std::vector<std::string> two(4, "returned");
  two[1] = two[3] = waits;
  EXPECT_EQ(dist::sim::deadlock_message(two),
            "no rank can make progress\n"
            "  ranks 0, 2: returned\n"
            "  ranks 1, 3: " +
                waits);
}

TEST(WideErrors, ARankThatSkipsAnAllReduceIsOneLineOfSixtyFour) {
  // Whenever rank 17 returns, the other 63 share one outcome line.
  const auto early = sim_test::failure_of(wide_world(), [] {
    std::vector<float> v(1, 1.0f);
    if (dist::get_rank() != kOddOne) dist::all_reduce(v);
  });
  EXPECT_THAT(early.what(), HasSubstr("\n  ranks 0-63 except 17: DeadlockError: all_reduce("));
  EXPECT_THAT(early.what(), HasSubstr("\n  rank 17: ok"));
  EXPECT_EQ(outcome_line_count(early.what()), 2u) << early.what();
  // Returning after every other rank posted: the posted calls share a line too.
  const auto late = sim_test::failure_of(wide_world(), [] { all_post_then([](auto&) {}); });
  const std::string text = late.what();
  EXPECT_THAT(text, HasSubstr("\n      rank 17 returned without calling it\n"
                              "      posted:\n"
                              "      ranks 0-63 except 17 called all_reduce(op=sum, float32 x 1)"));
  EXPECT_LT(wide_line_count(text), 10u) << text;
}

TEST(WideErrors, ADeadlockOfSixtyFourRanksIsTwoLines) {
  const auto e = sim_test::failure_of(wide_world(), [] {
    std::vector<float> v(1, 1.0f);
    if (dist::get_rank() == kOddOne) dist::recv(v, 0);
    else dist::all_reduce(v);
  });
  const std::string text = e.what();
  EXPECT_THAT(text,
              HasSubstr("\n  ranks 0-63: DeadlockError: no rank can make progress\n"
                        "      ranks 0-63 except 17: waits in all_reduce(op=sum, float32 x 1) "
                        "on world #1 (missing: ranks 17)\n"
                        "      rank 17: waits in recv(src=0, tag=0, float32 x 1) on world"));
  EXPECT_LT(wide_line_count(text), 10u) << text;
}

TEST(WideErrors, ADesyncOfSixtyFourRanksGroupsTheirCalls) {
  const auto e = sim_test::failure_of(
      wide_world(), [] { all_post_then([](std::vector<float>& v) { dist::broadcast(v, 0); }); });
  const std::string text = e.what();
  EXPECT_THAT(text, HasSubstr("ranks disagree on 'kind':\n"
                              "      ranks 0-63 except 17 called all_reduce(op=sum, float32 x 1)\n"
                              "      rank 17 called broadcast(src=0, float32 x 1)"));
  EXPECT_THAT(text, Not(HasSubstr("\n      rank 0 called")));
  EXPECT_LT(wide_line_count(text), 10u) << text;
}

}  // namespace

namespace {

TEST(WideErrors, RanksThatReturnedWithoutCallingShareOneLine) {
  // Ranks 0-31 stall (virtual time) until ranks 32-63 have all returned, then call all_reduce.
  auto c = wide_world();
  for (int r = 0; r < kWide / 2; ++r)
    c.faults.push_back(dist::sim::Fault::stall(r, 1, std::chrono::hours(1)));
  const auto e = sim_test::failure_of(c, [] {
    std::vector<float> v(1, 1.0f);
    if (dist::get_rank() < kWide / 2) dist::all_reduce(v);
  });
  const std::string text = e.what();
  EXPECT_THAT(text, HasSubstr("\n      ranks 32-63 returned without calling it\n"));
  EXPECT_LT(wide_line_count(text), 10u) << text;
}

}  // namespace
