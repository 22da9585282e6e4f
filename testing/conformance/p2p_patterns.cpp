// Point-to-point patterns over whole worlds: a ring of several same-tag messages, a two-way
// exchange with isend/irecv, every pair at once, empty and multi-megabyte ping-pong, and p2p
// inside a subgroup (ranks are group ranks).
#include <numeric>

#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

// Each rank isends three messages (tag 7) to the next and receives them from the previous, in order.
TEST_F(P2PTest, RingOfSameTagMessagesKeepsOrder) {
  for (int n : world_runner().world_sizes) {
    if (n < 2) continue;
    const auto got = run_world(n, [n] {
      const int rank = dist::get_rank();
      PerRank<float> out;
      for (int m = 0; m < 3; ++m) out.push_back(input<float>(rank, 1001, static_cast<std::uint64_t>(m)));
      std::vector<dist::Work> works;
      for (const auto& v : out) works.push_back(dist::isend(std::span<const float>(v), (rank + 1) % n, 7));
      PerRank<float> in(3, std::vector<float>(1001));
      for (auto& v : in) dist::recv(v, (rank + n - 1) % n, 7);
      for (auto& w : works) w.wait();
      for (auto& w : works) require(w.is_completed(), "isend not completed after wait()");
      return in;
    });
    std::vector<ref::Send<float>> sends;
    std::vector<ref::Recv> recvs;
    for (int m = 0; m < 3; ++m)
      for (int r = 0; r < n; ++r) sends.push_back({r, (r + 1) % n, 7, input<float>(r, 1001, static_cast<std::uint64_t>(m))});
    for (int r = 0; r < n; ++r)
      for (int m = 0; m < 3; ++m) recvs.push_back({r, (r + n - 1) % n, 7});
    const auto expected = ref::p2p(sends, recvs, n);  // in recvs' order: rank by rank
    for (const auto& [rank, in] : got)
      for (std::size_t m = 0; m < 3; ++m)
        EXPECT_TRUE(bits_equal(in[m], expected[static_cast<std::size_t>(rank) * 3 + m]))
            << "world " << n << ", rank " << rank << ", message " << m;
  }
}

// Ranks 0 and 1 isend, then irecv, then wait (receive first): both directions at once.
TEST_F(P2PTest, TwoWayExchangeWithIsendIrecv) {
  const auto n = world_runner().world_of_at_least(2);
  if (!n) GTEST_SKIP() << *lacks_world(2);
  const auto got = run_world(*n, [] {
    const int rank = dist::get_rank();
    std::vector<std::uint64_t> theirs;
    std::vector<dist::bfloat16> tv;
    if (rank > 1) return std::pair{theirs, tv};
    const int peer = 1 - rank;
    const auto mine = input<std::uint64_t>(rank, 50000);
    theirs.resize(mine.size());
    dist::Tensor t = dist::Tensor::zeros({2}, dist::DType::bfloat16);
    auto s = dist::isend(std::span<const std::uint64_t>(mine), peer, 1);
    const dist::Tensor out = dist::Tensor::from(input<dist::bfloat16>(rank, 2));  // outlives wait
    auto st = dist::isend(out, peer, 2);
    auto r = dist::irecv(std::span<std::uint64_t>(theirs), peer, 1);
    auto rt = dist::irecv(t, peer, 2);
    rt.wait();
    r.wait();
    st.wait();
    s.wait();
    for (auto* w : {&s, &st, &r, &rt}) require(w->is_completed(), "not completed after wait()");
    tv = values_of<dist::bfloat16>(t);
    return std::pair{theirs, tv};
  });
  for (const auto& [rank, pair] : got) {
    if (rank > 1) continue;
    EXPECT_TRUE(bits_equal(pair.first, input<std::uint64_t>(1 - rank, 50000))) << "rank " << rank;
    EXPECT_TRUE(bits_equal(pair.second, input<dist::bfloat16>(1 - rank, 2))) << "rank " << rank;
  }
}

using V = std::vector<std::int64_t>;
V message(int src, int dst, int tag, std::size_t count = 5) {
  V v(count);
  std::iota(v.begin(), v.end(), src * 1000 + dst * 100 + tag * 10);
  return v;
}

TEST_F(P2PTest, EveryPairExchangesWithIsendAndIrecv) {
  for (int n : world_runner().world_sizes) {
    const auto got = run_world(n, [n] {
      const int me = dist::get_rank();
      std::vector<V> out, in(static_cast<std::size_t>(n), V(5));
      for (int peer = 0; peer < n; ++peer) out.push_back(message(me, peer, 3));
      std::vector<dist::Work> works;
      for (int peer = 0; peer < n; ++peer) {
        if (peer == me) continue;
        const auto p = static_cast<std::size_t>(peer);
        works.push_back(dist::isend(std::span<const std::int64_t>(out[p]), peer, 3));
        works.push_back(dist::irecv(std::span<std::int64_t>(in[p]), peer, 3));
      }
      for (auto& w : works) w.wait();
      for (auto& w : works) require(w.is_completed(), "not completed after wait()");
      return in;
    });
    for (const auto& [rank, in] : got)
      for (int peer = 0; peer < n; ++peer)
        if (peer != rank) {
          EXPECT_EQ(in[static_cast<std::size_t>(peer)], message(peer, rank, 3))
              << "world " << n << ", rank " << rank << " from " << peer;
        }
  }
}

TEST_F(P2PTest, BlockingPingPongEmptyAndLargeMessages) {
  const auto n = world_runner().world_of_at_least(2);
  if (!n) GTEST_SKIP() << *lacks_world(2);
  const auto got = run_world(*n, [] {
    const int me = dist::get_rank();
    V empty, big(2'000'000), pong(2'000'000);
    std::iota(big.begin(), big.end(), 7);
    if (me == 0) {
      dist::send(empty, 1, 0);
      dist::send(big, 1, 9);
      dist::recv(pong, 1, 9);
    } else if (me == 1) {
      dist::recv(empty, 0, 0);
      dist::recv(pong, 0, 9);
      dist::send(pong, 0, 9);
    } else {
      pong = big;
    }
    return pong == big && empty.empty();
  });
  for (const auto& [rank, ok] : got) EXPECT_TRUE(ok) << "rank " << rank;
}

TEST_F(P2PTest, RanksInASubgroupAreGroupRanks) {
  const auto n = world_runner().world_of_at_least(3);
  if (!n) GTEST_SKIP() << *lacks_world(3);
  const auto got = run_world(*n, [] {
    const auto group = dist::new_group({2, 0});  // world rank 2 is group rank 0
    V v(4, -1);
    if (dist::get_rank() == 2) dist::send(message(2, 0, 4, 4), 1, 4, group);
    if (dist::get_rank() == 0) dist::recv(v, 0, 4, group);
    return v;
  });
  for (const auto& [rank, v] : got) EXPECT_EQ(v, rank == 0 ? message(2, 0, 4, 4) : V(4, -1)) << "rank " << rank;
}

}  // namespace
}  // namespace conformance
