// Receives from any_source over whole worlds: a server rank takes one message from every other
// rank in whatever order they come, learns each sender from recv's result and Work::source, and
// gets each sender's own payload; a recv from any_source takes only its tag. A backend that cannot
// receive from any source (nccl) refuses it with InvalidArgument before anything is posted.
#include <algorithm>
#include <string>

#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

class AnySource : public P2PTest {};

bool receives_from_any_source() {
  const auto backend = dist::get_backend();
  return backend != dist::Backend::nccl;
}

// Rank r's message: `count` copies of r * 1000 + tag.
std::vector<std::int32_t> message(int rank, int tag, std::size_t count) {
  return std::vector<std::int32_t>(count, rank * 1000 + tag);
}

// What rank 0 saw: for each message, "<source>:<ok|wrong payload>", sorted by source.
std::vector<std::string> serve(int n, std::size_t count, int tag) {
  std::vector<std::string> seen;
  for (int i = 1; i < n; ++i) {
    std::vector<std::int32_t> got(count, -1);
    const int from = dist::recv(got, dist::any_source, tag);
    seen.push_back(std::to_string(from) + (got == message(from, tag, count) ? ":ok" : ":wrong"));
  }
  std::sort(seen.begin(), seen.end());
  return seen;
}

TEST_F(AnySource, AServerTakesOneMessageFromEveryRankAndKnowsWhoSentIt) {
  for (int n : world_runner().world_sizes) {
    if (n < 2) continue;
    for (const std::size_t count : {std::size_t{1}, world_runner().large_count}) {
      // A tag per round: process ranks run ahead into the next round's sends.
      const int tag = count == 1 ? 3 : 4;
      const auto got = run_world(n, [&] {
        using Result = std::pair<bool, std::vector<std::string>>;
        if (!receives_from_any_source()) {
          if (dist::get_rank() != 0) return Result{false, {}};
          std::vector<std::int32_t> v(count);
          try {
            dist::recv(v, dist::any_source, tag);
          } catch (const dist::InvalidArgument& e) {
            return Result{false, {e.what()}};
          }
          return Result{false, {"accepted"}};
        }
        if (dist::get_rank() != 0) {
          dist::send(message(dist::get_rank(), tag, count), 0, tag);
          return Result{true, {}};
        }
        return Result{true, serve(n, count, tag)};
      });
      for (const auto& [rank, result] : got) {
        const auto& [supported, seen] = result;
        if (rank != 0) {
          EXPECT_TRUE(seen.empty()) << world_runner().name << ", rank " << rank;
          continue;
        }
        if (!supported) {
          ASSERT_EQ(seen.size(), 1U) << world_runner().name;
          EXPECT_NE(seen[0].find("recv: argument 'src' is any_source"), std::string::npos)
              << world_runner().name << ": " << seen[0];
          continue;
        }
        std::vector<std::string> expected;
        for (int r = 1; r < n; ++r) expected.push_back(std::to_string(r) + ":ok");
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(seen, expected) << world_runner().name << ", world " << n << ", count " << count;
      }
    }
  }
}

// irecv(any_source) posted before a recv from rank 1 with the same tag takes rank 1's first
// message (receives match in the order they were posted); a recv from any_source with another
// tag waits for that tag; Work::source tells each sender, a send's Work says -1.
TEST_F(AnySource, ReceivesMatchInPostingOrderAndByTag) {
  const auto n = world_runner().world_of_at_least(3);
  if (!n) GTEST_SKIP() << *lacks_world(3);
  const auto got = run_world(*n, [&] {
    const int rank = dist::get_rank();
    std::vector<int> out;
    if (!receives_from_any_source()) return out;  // every rank: refused as the case above checks
    if (rank == 1) {
      dist::send(message(1, 0, 4), 0, 0);
      dist::send(message(1, 1, 4), 0, 0);
    } else if (rank == 2) {
      const auto payload = message(2, 7, 4);
      auto work = dist::isend(std::span<const std::int32_t>(payload), 0, 7);
      work.wait();
      out.push_back(work.source());
    } else if (rank == 0) {
      std::vector<std::int32_t> any(4), from_one(4), tagged(4);
      auto first = dist::irecv(std::span<std::int32_t>(any), dist::any_source, 0);
      auto second = dist::irecv(std::span<std::int32_t>(from_one), 1, 0);
      const int tagged_from = dist::recv(tagged, dist::any_source, 7);
      first.wait();
      second.wait();
      out = {first.source(), any[0], second.source(), from_one[0], tagged_from, tagged[0]};
    }
    return out;
  });
  for (const auto& [rank, out] : got) {
    if (out.empty() && (rank == 0 || rank == 2))
      GTEST_SKIP() << world_runner().name
                   << " has no any-source receive (the case above checks it)";
    if (rank == 0) {
      EXPECT_EQ(out, (std::vector<int>{1, 1000, 1, 1001, 2, 2007})) << world_runner().name;
    } else if (rank == 2) {
      EXPECT_EQ(out, std::vector<int>{-1}) << world_runner().name;
    }
  }
}

}  // namespace
}  // namespace conformance
