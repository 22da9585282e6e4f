// Reference point-to-point: FIFO matching per (src, dst, tag) channel, tags, and the error cases.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/collectives.hpp"

namespace {

namespace ref = dist::reference;
using S = ref::Send<std::int32_t>;
using ref::Recv;
using Payloads = std::vector<std::vector<std::int32_t>>;

TEST(P2p, FifoOnOneChannel) {
  const std::vector<S> sends = {{0, 1, 0, {1}}, {0, 1, 0, {2, 3}}, {0, 1, 0, {4}}};
  const std::vector<Recv> recvs = {{1, 0, 0}, {1, 0, 0}, {1, 0, 0}};
  EXPECT_EQ(ref::p2p(sends, recvs, 2), (Payloads{{1}, {2, 3}, {4}}));
}

TEST(P2p, TagsSelectChannels) {
  const std::vector<S> sends = {{0, 1, 7, {70}}, {0, 1, 3, {30}}, {0, 1, 7, {71}}};
  const std::vector<Recv> recvs = {{1, 0, 3}, {1, 0, 7}, {1, 0, 7}};
  EXPECT_EQ(ref::p2p(sends, recvs, 2), (Payloads{{30}, {70}, {71}}));
}

TEST(P2p, SourcesAreSeparateChannels) {
  // Rank 2 receives from 1 first, then from 0; sends from 0 come earlier in the list.
  const std::vector<S> sends = {{0, 2, 0, {100}}, {1, 2, 0, {200}}, {0, 1, 0, {10}}};
  const std::vector<Recv> recvs = {{2, 1, 0}, {2, 0, 0}, {1, 0, 0}};
  EXPECT_EQ(ref::p2p(sends, recvs, 3), (Payloads{{200}, {100}, {10}}));
}

TEST(P2p, RingOfThree) {
  const std::vector<S> sends = {{0, 1, 0, {0}}, {1, 2, 0, {1}}, {2, 0, 0, {2}}};
  const std::vector<Recv> recvs = {{0, 2, 0}, {1, 0, 0}, {2, 1, 0}};
  EXPECT_EQ(ref::p2p(sends, recvs, 3), (Payloads{{2}, {0}, {1}}));
}

TEST(P2p, EmptyAndZeroLength) {
  EXPECT_EQ(ref::p2p(std::vector<S>{}, std::vector<Recv>{}, 1), Payloads{});
  EXPECT_EQ(ref::p2p(std::vector<S>{{1, 0, -5, {}}}, std::vector<Recv>{{0, 1, -5}}, 2), (Payloads{{}}));
}

void expect_invalid(const std::vector<S>& sends, const std::vector<Recv>& recvs, int world,
                    const std::vector<std::string>& fragments) {
  try {
    (void)ref::p2p(sends, recvs, world);
    ADD_FAILURE() << "no std::invalid_argument thrown";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const auto& s : fragments) EXPECT_NE(msg.find(s), std::string::npos) << "'" << s << "' not in: " << msg;
  }
}

TEST(P2p, UnmatchedRecv) {
  expect_invalid({}, {{1, 0, 0}}, 2, {"recv #0", "src 0", "dst 1", "tag 0", "no matching send"});
  // Wrong tag: the recv has no send (the send is unmatched too; the recv is reported first).
  expect_invalid({{0, 1, 1, {5}}}, {{1, 0, 2}}, 2, {"recv #0", "tag 2", "no matching send"});
  // Two recvs, one send: the second recv is unmatched.
  expect_invalid({{0, 1, 0, {5}}}, {{1, 0, 0}, {1, 0, 0}}, 2, {"recv #1", "no matching send"});
}

TEST(P2p, UnmatchedSend) {
  expect_invalid({{0, 1, 0, {5}}}, {}, 2, {"send #0", "src 0", "dst 1", "never received"});
  expect_invalid({{0, 1, 0, {5}}, {0, 1, 0, {6}}}, {{1, 0, 0}}, 2, {"send #1", "never received"});
}

TEST(P2p, RanksOutOfRangeOrSelf) {
  expect_invalid({{0, 2, 0, {1}}}, {{2, 0, 0}}, 2, {"send #0", "dst 2", "[0, 2)"});
  expect_invalid({{-1, 1, 0, {1}}}, {}, 2, {"send #0", "src -1", "[0, 2)"});
  expect_invalid({}, {{1, 3, 0}}, 2, {"recv #0", "src 3", "[0, 2)"});
  expect_invalid({}, {{-1, 0, 0}}, 2, {"recv #0", "dst -1"});
  expect_invalid({{1, 1, 0, {1}}}, {{1, 1, 0}}, 2, {"send #0", "same rank 1"});
  expect_invalid({}, {{0, 0, 0}}, 1, {"recv #0", "same rank 0"});
  expect_invalid({}, {}, 0, {"world size must be >= 1, got 0"});
}

}  // namespace
