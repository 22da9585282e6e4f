// Hand-computed collective results on sim: MMEngine's documented examples (semantics doc §1.3),
// the edge semantics of the reductions (wrapping, truncating mean, rank-order folding, per-step
// rounding, -0 < +0, first NaN wins) and the one-rank identity.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sim/tests/conformance.hpp"

namespace {

using namespace conformance;
using I64 = std::vector<std::int64_t>;

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

TEST(MMEngineExamples, Int64OpTableAtWorldTwo) {
  const std::vector<I64> in{{6, 3}, {5, 10}};
  const std::pair<const char*, I64> table[] = {{"sum", {11, 13}}, {"product", {30, 30}},
                                               {"min", {5, 3}},   {"max", {6, 10}},
                                               {"band", {4, 2}},  {"bor", {7, 11}},
                                               {"bxor", {3, 9}}};
  for (const auto& [op, expected] : table)
    EXPECT_EQ(all_reduce_of(in, op), (std::vector<I64>{expected, expected})) << op;
}

TEST(MMEngineExamples, IntegerMeanTruncatesTowardZero) {
  EXPECT_EQ(all_reduce_of<std::int64_t>({{1, 2}, {2, 2}}, "mean"), (std::vector<I64>(2, {1, 2})));
  EXPECT_EQ(all_reduce_of<std::int64_t>({{-1}, {-2}}, "mean"), (std::vector<I64>(2, {-1})));
  EXPECT_EQ(all_reduce_of<std::int64_t>({{1}, {2}, {3}}, "mean"), (std::vector<I64>(3, {2})));
  EXPECT_EQ(all_reduce_of<std::int64_t>({{1, 2}, {1, 2}, {2, 2}}, "mean"),
            (std::vector<I64>(3, {1, 2})));
  // Exact, unlike MMEngine's float32 path (which gives 16777216 here).
  EXPECT_EQ(all_reduce_of<std::int64_t>({{16777217}, {16777217}}, "mean"),
            (std::vector<I64>(2, {16777217})));
}

TEST(MMEngineExamples, Uint8SumWraps) {
  using U8 = std::vector<std::uint8_t>;
  EXPECT_EQ(all_reduce_of<std::uint8_t>({{1, 2, 3}, {200, 200, 200}}, "sum"),
            (std::vector<U8>(2, {201, 202, 203})));
  EXPECT_EQ(all_reduce_of<std::uint8_t>({{100, 200, 255}, {200, 100, 1}}, "sum"),
            (std::vector<U8>(2, {44, 44, 0})));
}

TEST(MMEngineExamples, BroadcastFromRankOne) {
  const auto got = dist::sim::run(world(2), [] {
    I64 v = dist::get_rank() == 0 ? I64{7, 8} : I64{8, 9};
    dist::broadcast(v, 1);
    return v;
  });
  EXPECT_EQ(got, (std::vector<I64>(2, {8, 9})));
}

TEST(MMEngineExamples, GatherToRankOneGivesRankZeroAnEmptyList) {
  const auto got = dist::sim::run(world(2), [] {
    const I64 v{dist::get_rank() * 10};
    const auto parts = dist::gather(v, 1);
    const auto tensors = dist::gather(dist::Tensor::from(v), 1);
    require(parts.size() == tensors.size(), "vector and tensor gathers disagree on the size");
    return parts;
  });
  EXPECT_EQ(got[0], (std::vector<I64>{}));
  EXPECT_EQ(got[1], (std::vector<I64>{{0}, {10}}));
}

TEST(EdgeSemantics, IntegerSumAndProductWrap) {
  EXPECT_EQ(all_reduce_of<std::int8_t>({{127, -128}, {1, -1}}, dist::ReduceOp::sum),
            (std::vector<std::vector<std::int8_t>>(2, {-128, 127})));
  EXPECT_EQ(all_reduce_of<std::int32_t>({{65536}, {65536}}, dist::ReduceOp::product),
            (std::vector<std::vector<std::int32_t>>(2, {0})));
  constexpr auto max64 = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(all_reduce_of<std::uint64_t>({{max64}, {2}}, dist::ReduceOp::sum),
            (std::vector<std::vector<std::uint64_t>>(2, {1})));
}

TEST(EdgeSemantics, IntegerMeanOfWrappedSum) {
  // -4 / 3 truncates to -1 (floor would give -2); 100 + 100 wraps to -56 in int8, then / 2.
  EXPECT_EQ(all_reduce_of<std::int32_t>({{-1}, {-1}, {-2}}, "MEAN"),
            (std::vector<std::vector<std::int32_t>>(3, {-1})));
  EXPECT_EQ(all_reduce_of<std::int8_t>({{100}, {100}}, "mean"),
            (std::vector<std::vector<std::int8_t>>(2, {-28})));
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

// A one-rank world leaves data untouched (bit for bit, even NaN payloads), and the gathering
// collectives return the rank's own data.
template <class T> class OneRank : public conformance::Test {};
TYPED_TEST_SUITE(OneRank, AllDTypes, DTypeName);

TYPED_TEST(OneRank, IsTheIdentity) {
  using T = TypeParam;
  const auto in = input<T>(0, 40);
  const auto got = dist::sim::run(world(1), [&] {
    std::vector<std::vector<T>> out;
    for (auto op : ops_for<T>()) {
      auto v = in;
      dist::all_reduce(v, op);
      out.push_back(v);
      dist::reduce(std::span<T>(v), 0, op);
      out.push_back(v);
      out.push_back(dist::reduce_scatter(in, op));
    }
    auto v = in;
    dist::all_reduce(v, "avg");  // not validated on one rank, as in MMEngine
    out.push_back(v);
    dist::broadcast(v, 0);
    out.push_back(v);
    const auto gathered = dist::all_gather(in);
    require(gathered.size() == 1, "all_gather on one rank must return one part");
    out.push_back(gathered[0]);
    const auto tensors = dist::all_gather(dist::Tensor::from(in));
    require(tensors.size() == 1, "all_gather(Tensor) on one rank must return one part");
    out.push_back(values_of<T>(tensors[0]));
    const auto g = dist::gather(in, 0);
    require(g.size() == 1, "gather on one rank must return one part");
    out.push_back(g[0]);
    std::vector<T> s(in.size());
    dist::scatter(s, std::vector<std::vector<T>>{in}, 0);
    out.push_back(s);
    out.push_back(dist::all_to_all(in));
    return out;
  });
  for (std::size_t c = 0; c < got[0].size(); ++c) EXPECT_EQ(bits(got[0][c]), bits(in)) << "case " << c;
}

}  // namespace
