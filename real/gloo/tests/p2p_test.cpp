// send/recv on gloo: every pair exchanges, tags match independently of posting order, same-tag
// messages arrive in order, empty and multi-megabyte messages, and p2p inside a subgroup.
#include <gtest/gtest.h>

#include <numeric>

#include "real/gloo/tests/gloo_test_util.hpp"

namespace {

using namespace gloo_test;
using V = std::vector<std::int64_t>;

V message(int src, int dst, int tag, std::size_t count = 5) {
  V v(count);
  std::iota(v.begin(), v.end(), src * 1000 + dst * 100 + tag * 10);
  return v;
}

TEST(GlooP2P, EveryPairExchangesWithIsendAndIrecv) {
  for (const int n : {2, 3, 4}) {
    const auto got = run(n, [&] {
      const int me = dist::get_rank();
      std::vector<V> out, in(static_cast<std::size_t>(n), V(5));
      for (int peer = 0; peer < n; ++peer) out.push_back(message(me, peer, 3));
      std::vector<dist::Work> works;
      for (int peer = 0; peer < n; ++peer) {
        if (peer == me) continue;
        works.push_back(dist::isend(std::span<const std::int64_t>(out[static_cast<std::size_t>(peer)]), peer, 3));
        works.push_back(dist::irecv(std::span<std::int64_t>(in[static_cast<std::size_t>(peer)]), peer, 3));
      }
      for (auto& w : works) w.wait();
      for (auto& w : works) EXPECT_TRUE(w.is_completed());
      return in;
    });
    for (int r = 0; r < n; ++r)
      for (int peer = 0; peer < n; ++peer)
        if (peer != r) {
          EXPECT_EQ(got[static_cast<std::size_t>(r)][static_cast<std::size_t>(peer)], message(peer, r, 3));
        }
  }
}

TEST(GlooP2P, TagsMatchWhateverTheOrderAndSameTagKeepsOrder) {
  const auto got = run(2, [] {
    std::vector<V> received;
    if (dist::get_rank() == 0) {
      const V a = message(0, 1, 1), b = message(0, 1, 2), c = message(0, 1, 1, 3);
      auto wa = dist::isend(std::span<const std::int64_t>(a), 1, 1);
      auto wb = dist::isend(std::span<const std::int64_t>(b), 1, 2);
      auto wc = dist::isend(std::span<const std::int64_t>(c), 1, 1);
      wa.wait();
      wb.wait();
      wc.wait();
    } else {
      V b(5), a(5), c(3);
      dist::recv(b, 0, 2);  // tag 2 first, though it was sent second
      dist::recv(a, 0, 1);  // the oldest tag-1 message
      dist::recv(c, 0, 1);
      received = {a, b, c};
    }
    return received;
  });
  EXPECT_EQ(got[1], (std::vector<V>{message(0, 1, 1), message(0, 1, 2), message(0, 1, 1, 3)}));
}

TEST(GlooP2P, BlockingPingPongEmptyAndLargeMessages) {
  const auto got = run(2, [] {
    const int me = dist::get_rank();
    V empty;
    V big(2'000'000);
    std::iota(big.begin(), big.end(), 7);
    V pong(2'000'000);
    if (me == 0) {
      dist::send(empty, 1, 0);
      dist::send(big, 1, 9);
      dist::recv(pong, 1, 9);
    } else {
      dist::recv(empty, 0, 0);
      dist::recv(pong, 0, 9);
      dist::send(pong, 0, 9);
    }
    return pong == big && empty.empty();
  });
  EXPECT_EQ(got, (std::vector<bool>{true, true}));
}

TEST(GlooP2P, RanksInASubgroupAreGroupRanks) {
  const auto got = run(3, [] {
    const auto group = dist::new_group({2, 0});  // world 2 is group rank 0
    V v(4, -1);
    if (dist::get_rank() == 2) dist::send(message(2, 0, 4, 4), 1, 4, group);
    if (dist::get_rank() == 0) dist::recv(v, 0, 4, group);
    return v;
  });
  EXPECT_EQ(got[0], message(2, 0, 4, 4));
  EXPECT_EQ(got[1], V(4, -1));
}

}  // namespace
