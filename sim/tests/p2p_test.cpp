// Point-to-point messages on sim against reference::p2p: every data form and dtype, tags, FIFO
// matching per (src, tag), out-of-order receipt across tags, a ring and a two-way exchange.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "sim/tests/conformance.hpp"

namespace {

using namespace conformance;

template <class T> class P2P : public conformance::Test {};
TYPED_TEST_SUITE(P2P, AllDTypes, DTypeName);

// Non-empty message sizes (empty ones: EmptyMessages).
constexpr std::size_t sizes[] = {1, 7, 100003};

// Rank 0 sends one message per form (vector on tag 0, span on tag 1, Tensor on tag 2) for each
// size; rank 1 receives them with the same form; the payloads equal the reference's.
TYPED_TEST(P2P, EveryFormAndCount) {
  using T = TypeParam;
  const auto payload = [](std::size_t count, int form) {
    return input<T>(0, count, static_cast<std::uint64_t>(form));
  };
  const auto got = dist::sim::run(world(2), [&] {
    std::vector<std::vector<T>> received;
    for (std::size_t count : sizes) {
      if (dist::get_rank() == 0) {
        dist::send(payload(count, 0), 1, 0);
        auto s = payload(count, 1);
        dist::send(std::span<const T>(s), 1, 1);
        dist::send(dist::Tensor::from(payload(count, 2), shape_for(count)), 1, 2);
      } else {
        std::vector<T> v(count), s(count);
        dist::recv(v, 0, 0);
        dist::recv(std::span<T>(s), 0, 1);
        dist::Tensor t = dist::Tensor::zeros(shape_for(count), dist::dtype_v<T>);
        dist::recv(t, 0, 2);
        require(t.shape() == shape_for(count), "recv changed the tensor's shape");
        received.insert(received.end(), {v, s, values_of<T>(t)});
      }
    }
    return received;
  });
  std::vector<ref::Send<ref_t<T>>> sends;
  std::vector<ref::Recv> recvs;
  for (std::size_t count : sizes) {
    for (int form = 0; form < 3; ++form) {
      sends.push_back({0, 1, form, to_ref(payload(count, form))});
      recvs.push_back({1, 0, form});
    }
  }
  const auto expected = ref::p2p(sends, recvs, 2);
  ASSERT_EQ(got[1].size(), expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k)
    EXPECT_TRUE(bits_equal(got[1][k], from_ref<T>(expected[k]))) << "message " << k;
}

// Messages of zero elements in every dtype and form: they match their recvs like any other.
TEST(P2P, EmptyMessages) {
  const auto sent = dist::sim::run(world(2), [] {
    int done = 0;
    for (dist::DType dtype : dist::all_dtypes) {
      const auto tag = static_cast<int>(dtype);
      dist::Tensor t = dist::Tensor::zeros({0, 3}, dtype);
      if (dist::get_rank() == 0) {
        dist::send(t, 1, tag);
      } else {
        dist::recv(t, 0, tag);
      }
      ++done;
    }
    if (dist::get_rank() == 0) {
      dist::send(std::vector<std::int64_t>{}, 1, 20);
      dist::send(std::span<const std::uint8_t>(), 1, 21);
    } else {
      std::vector<std::int64_t> v;
      dist::recv(v, 0, 20);
      dist::recv(std::span<std::uint8_t>(), 0, 21);
    }
    return done + 2;
  });
  EXPECT_EQ(sent, (std::vector<int>{12, 12}));
}

// Rank 0 posts four sends without waiting: tag 5 (A), tag 5 (B), tag 9 (C), tag 5 (D). Rank 1
// receives tag 9 first, then tag 5 three times: C, then A, B, D in the order sent.
TEST(P2P, TagsMatchFifoPerSourceAndTag) {
  const std::vector<std::vector<std::int32_t>> msgs{{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  const int tags[] = {5, 5, 9, 5};
  const auto got = dist::sim::run(world(2), [&] {
    std::vector<std::vector<std::int32_t>> received;
    if (dist::get_rank() == 0) {
      std::vector<dist::Work> works;
      for (std::size_t i = 0; i < msgs.size(); ++i)
        works.push_back(dist::isend(std::span<const std::int32_t>(msgs[i]), 1, tags[i]));
      for (auto& w : works) w.wait();
    } else {
      for (int tag : {9, 5, 5, 5}) {
        std::vector<std::int32_t> v(2);
        dist::recv(v, 0, tag);
        received.push_back(v);
      }
    }
    return received;
  });
  std::vector<ref::Send<std::int32_t>> sends;
  for (std::size_t i = 0; i < msgs.size(); ++i) sends.push_back({0, 1, tags[i], msgs[i]});
  const auto expected = ref::p2p(sends, {{1, 0, 9}, {1, 0, 5}, {1, 0, 5}, {1, 0, 5}}, 2);
  EXPECT_EQ(got[1], expected);
  EXPECT_EQ(got[1], (std::vector<std::vector<std::int32_t>>{{5, 6}, {1, 2}, {3, 4}, {7, 8}}));
}

// Messages from different sources on the same tag are matched per source.
TEST(P2P, SourcesAreSeparateChannels) {
  const auto got = dist::sim::run(world(3), [] {
    const int rank = dist::get_rank();
    std::vector<std::vector<double>> received;
    if (rank == 0) {
      std::vector<double> from2(3), from1(3);
      auto w2 = dist::irecv(std::span<double>(from2), 2, 4);
      dist::recv(from1, 1, 4);
      w2.wait();
      received = {from1, from2};
    } else {
      dist::send(input<double>(rank, 3), 0, 4);
    }
    return received;
  });
  const auto expected = ref::p2p<double>(
      {{1, 0, 4, input<double>(1, 3)}, {2, 0, 4, input<double>(2, 3)}}, {{0, 1, 4}, {0, 2, 4}}, 3);
  EXPECT_TRUE(bits_equal(got[0], expected));
}

// Each of 8 ranks sends to the next and receives from the previous.
TEST(P2P, RingOfEightRanks) {
  constexpr int n = 8;
  const auto got = dist::sim::run(world(n), [] {
    const int rank = dist::get_rank();
    const auto mine = input<float>(rank, 1001);
    std::vector<float> from_prev(mine.size());
    auto send = dist::isend(std::span<const float>(mine), (rank + 1) % n, 7);
    dist::recv(from_prev, (rank + n - 1) % n, 7);
    send.wait();
    require(send.is_completed(), "isend not completed after wait()");
    return from_prev;
  });
  std::vector<ref::Send<float>> sends;
  std::vector<ref::Recv> recvs;
  for (int r = 0; r < n; ++r) {
    sends.push_back({r, (r + 1) % n, 7, input<float>(r, 1001)});
    recvs.push_back({r, (r + n - 1) % n, 7});
  }
  EXPECT_TRUE(bits_equal(got, ref::p2p(sends, recvs, n)));
}

// Both ranks isend, then irecv, then wait (receive first): an exchange in both directions at once.
TEST(P2P, TwoWayExchangeWithIsendIrecv) {
  const auto got = dist::sim::run(world(2), [] {
    const int rank = dist::get_rank();
    const int peer = 1 - rank;
    const auto mine = input<std::uint64_t>(rank, 50000);
    std::vector<std::uint64_t> theirs(mine.size());
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
    const auto tv = values_of<dist::bfloat16>(t);
    return std::pair{theirs, tv};
  });
  const auto expected = ref::p2p<std::uint64_t>(
      {{0, 1, 1, input<std::uint64_t>(0, 50000)}, {1, 0, 1, input<std::uint64_t>(1, 50000)}},
      {{0, 1, 1}, {1, 0, 1}}, 2);
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_TRUE(bits_equal(got[r].first, expected[r])) << "rank " << r;
    EXPECT_TRUE(bits_equal(got[r].second, input<dist::bfloat16>(1 - static_cast<int>(r), 2)))
        << "rank " << r;
  }
}

}  // namespace
