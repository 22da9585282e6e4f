// What only sim promises, bit for bit with reference/: floats fold in rank order, half types round
// after every step, -0 < +0 and the first NaN wins in min/max; and worlds of 64 and 256 ranks.
// (The results every backend must give are in testing/conformance/.)
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sim/tests/sim_test_util.hpp"

namespace {

using namespace sim_test;

// all_reduce over world size in.size(), rank r contributing in[r]; returns every rank's result.
template <class T>
std::vector<std::vector<T>> all_reduce_of(const std::vector<std::vector<T>>& in, dist::OpArg op) {
  return dist::sim::run(world(static_cast<int>(in.size())), [&] {
    auto v = in[static_cast<std::size_t>(dist::get_rank())];
    dist::all_reduce(v, op);
    return v;
  });
}

// The exact bits of every element (no NaN leniency).
template <class T> std::vector<std::uint64_t> bits(const std::vector<T>& v) {
  std::vector<std::uint64_t> out;
  for (const T& x : v) out.push_back(bits_of(x));
  return out;
}

TEST(EdgeSemantics, FloatsFoldInRankOrder) {
  // (1e20 + 1) - 1e20 = 0 in rank order; another order would give 1.
  EXPECT_EQ(all_reduce_of<float>({{1e20f, -1e20f}, {1.f, 1e20f}, {-1e20f, 1.f}}, "sum"),
            (std::vector<std::vector<float>>(3, {0.f, 1.f})));
  EXPECT_EQ(all_reduce_of<double>({{1.0}, {1e-16}, {-1.0}}, "sum"),
            (std::vector<std::vector<double>>(3, {0.0})));
}

TEST(EdgeSemantics, HalfPrecisionRoundsAfterEveryStep) {
  // 2048 + 1 rounds back to 2048 (ties to even) at each step; one final rounding would give 2050.
  const auto h = [](float x) { return dist::float16(x); };
  const auto got = all_reduce_of<dist::float16>({{h(2048)}, {h(1)}, {h(1)}}, "sum");
  for (const auto& v : got) EXPECT_EQ(v.front().bits, dist::float16(2048.f).bits);
  const auto b = [](float x) { return dist::bfloat16(x); };
  const auto got_b = all_reduce_of<dist::bfloat16>({{b(256)}, {b(1)}, {b(1)}}, "sum");
  for (const auto& v : got_b) EXPECT_EQ(v.front().bits, dist::bfloat16(256.f).bits);
}

TEST(EdgeSemantics, SignedZerosInMinMax) {
  const auto both = [](float first, float second, dist::ReduceOp op) {
    return std::bit_cast<std::uint32_t>(all_reduce_of<float>({{first}, {second}}, op)[1][0]);
  };
  const auto neg = std::bit_cast<std::uint32_t>(-0.f);
  const auto pos = std::bit_cast<std::uint32_t>(0.f);
  EXPECT_EQ(both(0.f, -0.f, dist::ReduceOp::min), neg);
  EXPECT_EQ(both(-0.f, 0.f, dist::ReduceOp::min), neg);
  EXPECT_EQ(both(0.f, -0.f, dist::ReduceOp::max), pos);
  EXPECT_EQ(both(-0.f, 0.f, dist::ReduceOp::max), pos);
}

TEST(EdgeSemantics, FirstNaNWinsInMinMax) {
  const float nan_a = std::bit_cast<float>(0x7FC00001u);
  const float nan_b = std::bit_cast<float>(0xFFC00002u);
  const float inf = std::numeric_limits<float>::infinity();
  for (auto op : {dist::ReduceOp::min, dist::ReduceOp::max}) {
    const auto got = all_reduce_of<float>({{1.f, inf, -inf}, {nan_a, nan_b, 2.f}, {nan_b, 3.f, nan_a}}, op);
    for (const auto& v : got)
      EXPECT_EQ(bits(v), (std::vector<std::uint64_t>{0x7FC00001u, 0xFFC00002u, 0x7FC00001u}))
          << dist::to_string(op);
  }
  // float16: min/max return an operand's bits, so the first NaN's payload survives.
  const auto h = dist::float16::from_bits;
  const auto got_h = all_reduce_of<dist::float16>({{h(0x3C00)}, {h(0x7E05)}, {h(0xFE07)}}, "max");
  for (const auto& v : got_h) EXPECT_EQ(v.front().bits, 0x7E05);
}

// Many ranks (more than cores): a few all_reduces at 64 and 256 ranks.
template <class T> void check_large_world(int n, dist::ReduceOp op, std::size_t count) {
  const auto salt = static_cast<std::uint64_t>(op);
  const auto got = dist::sim::run(world(n), [&] {
    auto v = input<T>(dist::get_rank(), count, salt);
    dist::all_reduce(v, op);
    return v;
  });
  const auto expected = from_ref<T>(ref::all_reduce(to_ref(inputs<T>(n, count, salt)), to_ref(op)));
  EXPECT_TRUE(bits_equal(got, expected)) << "world " << n << ", op " << dist::to_string(op);
}

TEST(AllReduceLargeWorld, SixtyFourRanks) {
  check_large_world<float>(64, dist::ReduceOp::sum, 3001);
  check_large_world<std::int32_t>(64, dist::ReduceOp::mean, 7);
  check_large_world<dist::float16>(64, dist::ReduceOp::max, 5);
}

TEST(AllReduceLargeWorld, TwoHundredFiftySixRanks) {
  check_large_world<std::int64_t>(256, dist::ReduceOp::sum, 5);
  check_large_world<dist::bfloat16>(256, dist::ReduceOp::mean, 3);
}

// More ranks than cores: broadcast, all_gather and barrier at 64 and 256 ranks.
TEST(LargeWorld, BroadcastAllGatherBarrier) {
  for (int n : {64, 256}) {
    const int src = n - 3;
    const auto got = dist::sim::run(world(n), [src] {
      const int rank = dist::get_rank();
      auto b = input<double>(rank, 5);
      dist::broadcast(b, src);
      dist::barrier();
      const auto gathered = concat(dist::all_gather(input<std::int32_t>(rank, 3)));
      dist::barrier();
      return std::pair{b, gathered};
    });
    const auto b_expected = ref::broadcast(inputs<double>(n, 5), src);
    const auto g_expected = ref::all_gather(inputs<std::int32_t>(n, 3));
    for (std::size_t r = 0; r < got.size(); ++r) {
      EXPECT_TRUE(bits_equal(got[r].first, b_expected[r])) << "world " << n << ", rank " << r;
      EXPECT_TRUE(bits_equal(got[r].second, g_expected[r])) << "world " << n << ", rank " << r;
    }
  }
}

}  // namespace
