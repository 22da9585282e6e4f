// Every collective on gloo worlds of 2, 3 and 4 ranks (threads), compared exactly with the
// reference on exact-sum inputs, for every dtype (and every op where there is one).
#include <gtest/gtest.h>

#include <algorithm>
#include <span>

#include "real/gloo/tests/gloo_test_util.hpp"

namespace {

using namespace gloo_test;

constexpr int worlds[] = {2, 3, 4};
constexpr std::size_t counts[] = {0, 1, 7, 1000};

template <class T> class GlooCollectives : public ::testing::Test {};
TYPED_TEST_SUITE(GlooCollectives, AllDTypes, DTypeName);

// The per-rank inputs of case `salt` for a world of n.
template <class T> std::vector<std::vector<T>> inputs(int n, std::size_t count, std::uint64_t salt) {
  std::vector<std::vector<T>> in;
  for (int r = 0; r < n; ++r) in.push_back(input<T>(r, count, salt));
  return in;
}

TYPED_TEST(GlooCollectives, AllReduceEveryOp) {
  using T = TypeParam;
  for (const int n : worlds) {
    // One world runs every (op, count) case in turn; each rank returns its outputs, concatenated.
    const auto got = run(n, [&] {
      std::vector<T> all;
      std::uint64_t salt = 0;
      for (const auto op : ops_for<T>())
        for (const std::size_t count : counts) {
          auto v = input<T>(dist::get_rank(), count, ++salt);
          dist::all_reduce(v, op);
          all.insert(all.end(), v.begin(), v.end());
        }
      return all;
    });
    std::vector<std::vector<T>> expected(static_cast<std::size_t>(n));
    std::uint64_t salt = 0;
    for (const auto op : ops_for<T>())
      for (const std::size_t count : counts) {
        const auto e = from_ref<T>(ref::all_reduce(to_ref(inputs<T>(n, count, ++salt)), to_ref(op)));
        for (int r = 0; r < n; ++r)
          expected[static_cast<std::size_t>(r)].insert(expected[static_cast<std::size_t>(r)].end(),
                                                       e[static_cast<std::size_t>(r)].begin(),
                                                       e[static_cast<std::size_t>(r)].end());
      }
    EXPECT_EQ(bits(got), bits(expected)) << "world " << n;
  }
}

TYPED_TEST(GlooCollectives, ReduceEveryOpAndRoot) {
  using T = TypeParam;
  for (const int n : worlds) {
    const auto got = run(n, [&] {
      std::vector<T> all;
      std::uint64_t salt = 0;
      for (const auto op : ops_for<T>())
        for (int root = 0; root < n; ++root) {
          auto v = input<T>(dist::get_rank(), 7, ++salt);
          dist::reduce(v, root, op);
          all.insert(all.end(), v.begin(), v.end());
        }
      return all;
    });
    std::vector<std::vector<T>> expected(static_cast<std::size_t>(n));
    std::uint64_t salt = 0;
    for (const auto op : ops_for<T>())
      for (int root = 0; root < n; ++root) {
        const auto e = from_ref<T>(ref::reduce(to_ref(inputs<T>(n, 7, ++salt)), to_ref(op), root));
        for (int r = 0; r < n; ++r) {
          auto& dst = expected[static_cast<std::size_t>(r)];
          dst.insert(dst.end(), e[static_cast<std::size_t>(r)].begin(), e[static_cast<std::size_t>(r)].end());
        }
      }
    EXPECT_EQ(bits(got), bits(expected)) << "world " << n;
  }
}

// Appends every rank's vector of `part` to `acc` (rank by rank).
template <class T> void append(std::vector<std::vector<T>>& acc, const std::vector<std::vector<T>>& part) {
  acc.resize(std::max(acc.size(), part.size()));
  for (std::size_t r = 0; r < part.size(); ++r) acc[r].insert(acc[r].end(), part[r].begin(), part[r].end());
}

template <class T> std::vector<T> flat(const std::vector<std::vector<T>>& parts) {
  std::vector<T> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// broadcast, all_gather, gather and scatter (every root), all_to_all, at every count.
TYPED_TEST(GlooCollectives, DataMovement) {
  using T = TypeParam;
  for (const int n : worlds) {
    const auto got = run(n, [&] {
      const int me = dist::get_rank();
      std::vector<T> all;
      const auto keep = [&](const std::vector<T>& v) { all.insert(all.end(), v.begin(), v.end()); };
      std::uint64_t salt = 100;
      for (const std::size_t count : counts) {
        for (int root = 0; root < n; ++root) {
          auto v = input<T>(me, count, ++salt);
          dist::broadcast(v, root);
          keep(v);
          keep(flat(dist::gather(input<T>(me, count, ++salt), root)));
          std::vector<T> out(count);
          std::vector<T> chunks = input<T>(me, count * static_cast<std::size_t>(n), ++salt);
          dist::scatter(std::span<T>(out), std::span<const T>(chunks), root);
          keep(out);
        }
        keep(flat(dist::all_gather(input<T>(me, count, ++salt))));
        keep(dist::all_to_all(input<T>(me, count * static_cast<std::size_t>(n), ++salt)));
      }
      return all;
    });
    std::vector<std::vector<T>> expected;
    std::uint64_t salt = 100;
    const auto world = static_cast<std::size_t>(n);
    for (const std::size_t count : counts) {
      for (int root = 0; root < n; ++root) {
        append(expected, from_ref<T>(ref::broadcast(to_ref(inputs<T>(n, count, ++salt)), root)));
        append(expected, from_ref<T>(ref::gather(to_ref(inputs<T>(n, count, ++salt)), root)));
        const auto src = to_ref(inputs<T>(n, count * world, ++salt))[static_cast<std::size_t>(root)];
        append(expected, from_ref<T>(ref::scatter(src, n, root)));
      }
      append(expected, from_ref<T>(ref::all_gather(to_ref(inputs<T>(n, count, ++salt)))));
      append(expected, from_ref<T>(ref::all_to_all(to_ref(inputs<T>(n, count * world, ++salt)))));
    }
    EXPECT_EQ(bits(got), bits(expected)) << "world " << n;
  }
}

TYPED_TEST(GlooCollectives, ReduceScatterEveryOp) {
  using T = TypeParam;
  for (const int n : worlds) {
    const auto world = static_cast<std::size_t>(n);
    const auto got = run(n, [&] {
      std::vector<T> all;
      std::uint64_t salt = 200;
      for (const auto op : ops_for<T>())
        for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}}) {
          const auto v = dist::reduce_scatter(input<T>(dist::get_rank(), count * world, ++salt), op);
          all.insert(all.end(), v.begin(), v.end());
        }
      return all;
    });
    std::vector<std::vector<T>> expected;
    std::uint64_t salt = 200;
    for (const auto op : ops_for<T>())
      for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}})
        append(expected, from_ref<T>(ref::reduce_scatter(to_ref(inputs<T>(n, count * world, ++salt)), to_ref(op))));
    EXPECT_EQ(bits(got), bits(expected)) << "world " << n;
  }
}

// The variable-size all_gather the object helpers use: rank r contributes counts[r] elements.
TYPED_TEST(GlooCollectives, AllGatherVariableSizes) {
  using T = TypeParam;
  for (const int n : worlds) {
    const std::vector<std::vector<std::size_t>> layouts{
        std::vector<std::size_t>(static_cast<std::size_t>(n), 0), {3, 0, 1000, 2}, {0, 5, 1, 0}};
    const auto got = run(n, [&] {
      std::vector<T> all;
      std::uint64_t salt = 300;
      for (auto counts_v : layouts) {
        counts_v.resize(static_cast<std::size_t>(n));
        auto in = input<T>(dist::get_rank(), counts_v[static_cast<std::size_t>(dist::get_rank())], ++salt);
        std::size_t total = 0;
        for (auto c : counts_v) total += c;
        std::vector<T> out(total);
        dist::detail::all_gather_v(dist::detail::buffer_of(std::span<T>(in)),
                                   dist::detail::buffer_of(std::span<T>(out)), counts_v, {})
            .wait();
        all.insert(all.end(), out.begin(), out.end());
      }
      return all;
    });
    std::vector<T> expected;
    std::uint64_t salt = 300;
    for (auto counts_v : layouts) {
      counts_v.resize(static_cast<std::size_t>(n));
      ++salt;
      for (int r = 0; r < n; ++r) {
        const auto part = input<T>(r, counts_v[static_cast<std::size_t>(r)], salt);
        expected.insert(expected.end(), part.begin(), part.end());
      }
    }
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(bits(std::vector<std::vector<T>>{got[static_cast<std::size_t>(r)]}),
                bits(std::vector<std::vector<T>>{expected}))
          << "world " << n << " rank " << r;
  }
}

TEST(GlooCollectivesLarge, AllReduceAndBroadcastOfSeveralMegabytes) {
  constexpr std::size_t count = 3'000'001;  // gloo splits this into many segments
  const auto got = run(3, [&] {
    auto v = input<double>(dist::get_rank(), count, 7);
    dist::all_reduce(v, dist::ReduceOp::sum);
    auto b = input<std::int32_t>(dist::get_rank(), count, 8);
    dist::broadcast(b, 2);
    return std::pair{v, b};
  });
  const auto sum = ref::all_reduce(ref::PerRank<double>{input<double>(0, count, 7), input<double>(1, count, 7),
                                                        input<double>(2, count, 7)},
                                   ref::Op::sum)[0];
  for (const auto& [v, b] : got) {
    EXPECT_EQ(v, sum);
    EXPECT_EQ(b, input<std::int32_t>(2, count, 8));
  }
}

}  // namespace
