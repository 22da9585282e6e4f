// Point-to-point messages against reference::p2p: every data form and dtype, empty messages, tags
// matched FIFO per (source, tag) whatever the posting order, sources as separate channels, rings,
// exchanges in both directions, every pair at once, large messages and p2p inside a subgroup.
#include <numeric>

#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

template <class T> class P2P : public P2PTest {};
TYPED_TEST_SUITE(P2P, AllDTypes, DTypeName);

// Rank 0 sends one message per form (vector on tag 0, span on tag 1, Tensor on tag 2) for each
// size; rank 1 receives them in the same form; the payloads equal the reference's.
TYPED_TEST(P2P, EveryFormAndCount) {
  using T = TypeParam;
  const auto n = world_runner().world_of_at_least(2);
  if (!n) GTEST_SKIP() << *lacks_world(2);
  const std::vector<std::size_t> sizes{1, 7, world_runner().large_count};
  const auto payload = [](std::size_t count, int form) { return input<T>(0, count, static_cast<std::uint64_t>(form)); };
  const auto got = run_world(*n, [&] {
    PerRank<T> received;
    for (std::size_t count : sizes) {
      if (dist::get_rank() == 0) {
        dist::send(payload(count, 0), 1, 0);
        auto s = payload(count, 1);
        dist::send(std::span<const T>(s), 1, 1);
        dist::send(dist::Tensor::from(payload(count, 2), shape_for(count)), 1, 2);
      } else if (dist::get_rank() == 1) {
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
  for (std::size_t count : sizes)
    for (int form = 0; form < 3; ++form) {
      sends.push_back({0, 1, form, to_ref(payload(count, form))});
      recvs.push_back({1, 0, form});
    }
  const auto expected = from_ref<T>(ref::p2p(sends, recvs, *n));
  for (const auto& [rank, received] : got)
    if (rank == 1) {
      EXPECT_TRUE(bits_equal(received, expected));
    }
}

// Messages of zero elements in every dtype and form match their recvs like any other.
TEST_F(P2PTest, EmptyMessages) {
  const auto n = world_runner().world_of_at_least(2);
  if (!n) GTEST_SKIP() << *lacks_world(2);
  const auto got = run_world(*n, [] {
    int done = 0;
    if (dist::get_rank() > 1) return done;
    for (dist::DType dtype : dist::all_dtypes) {
      const auto tag = static_cast<int>(dtype);
      dist::Tensor t = dist::Tensor::zeros({0, 3}, dtype);
      if (dist::get_rank() == 0) dist::send(t, 1, tag);
      else dist::recv(t, 0, tag);
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
  for (const auto& [rank, done] : got) EXPECT_EQ(done, rank > 1 ? 0 : 12) << "rank " << rank;
}

// Rank 0 posts four sends without waiting: tag 5 (A), tag 5 (B), tag 9 (C), tag 5 (D). Rank 1
// receives tag 9 first, then tag 5 three times: C, then A, B, D in the order sent.
TEST_F(P2PTest, TagsMatchFifoPerSourceAndTag) {
  const auto n = world_runner().world_of_at_least(2);
  if (!n) GTEST_SKIP() << *lacks_world(2);
  const PerRank<std::int32_t> msgs{{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  const int tags[] = {5, 5, 9, 5};
  const auto got = run_world(*n, [&] {
    PerRank<std::int32_t> received;
    if (dist::get_rank() == 0) {
      std::vector<dist::Work> works;
      for (std::size_t i = 0; i < msgs.size(); ++i)
        works.push_back(dist::isend(std::span<const std::int32_t>(msgs[i]), 1, tags[i]));
      for (auto& w : works) w.wait();
    } else if (dist::get_rank() == 1) {
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
  const auto expected = ref::p2p(sends, {{1, 0, 9}, {1, 0, 5}, {1, 0, 5}, {1, 0, 5}}, *n);
  for (const auto& [rank, received] : got)
    if (rank == 1) {
      EXPECT_EQ(received, expected);
      EXPECT_EQ(received, (PerRank<std::int32_t>{{5, 6}, {1, 2}, {3, 4}, {7, 8}}));
    }
}

// Messages from different sources on the same tag are matched per source.
TEST_F(P2PTest, SourcesAreSeparateChannels) {
  const auto n = world_runner().world_of_at_least(3);
  if (!n) GTEST_SKIP() << *lacks_world(3);
  const auto got = run_world(*n, [] {
    const int rank = dist::get_rank();
    PerRank<double> received;
    if (rank == 0) {
      std::vector<double> from2(3), from1(3);
      auto w2 = dist::irecv(std::span<double>(from2), 2, 4);
      dist::recv(from1, 1, 4);
      w2.wait();
      received = {from1, from2};
    } else if (rank <= 2) {
      dist::send(input<double>(rank, 3), 0, 4);
    }
    return received;
  });
  const auto expected = ref::p2p<double>(
      {{1, 0, 4, input<double>(1, 3)}, {2, 0, 4, input<double>(2, 3)}}, {{0, 1, 4}, {0, 2, 4}}, *n);
  for (const auto& [rank, received] : got)
    if (rank == 0) {
      EXPECT_TRUE(bits_equal(received, expected));
    }
}

}  // namespace
}  // namespace conformance
