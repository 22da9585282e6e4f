// Hand-computed cases for the reduction ops: MMEngine's integer table, wrapping, integer mean,
// float fold order, per-step rounding of Half/BFloat16, NaN and signed-zero min/max, legality.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reference/collectives.hpp"

namespace {

namespace ref = dist::reference;
using ref::BFloat16;
using ref::Half;
using ref::Op;
using ref::PerRank;

// MMEngine's table: ws=2, int64 inputs [6,3] and [5,10].
PerRank<std::int64_t> mmengine_input() { return {{6, 3}, {5, 10}}; }

TEST(ReduceOp, MmengineTable) {
  const std::vector<std::pair<Op, std::vector<std::int64_t>>> table = {
      {Op::sum, {11, 13}}, {Op::product, {30, 30}}, {Op::min, {5, 3}}, {Op::max, {6, 10}},
      {Op::band, {4, 2}},  {Op::bor, {7, 11}},      {Op::bxor, {3, 9}}};
  for (const auto& [op, expected] : table) {
    EXPECT_EQ(ref::all_reduce(mmengine_input(), op), (PerRank<std::int64_t>{expected, expected}))
        << "op " << ref::to_string(op);
  }
}

TEST(ReduceOp, IntegerMeanTruncatesTowardZero) {
  EXPECT_EQ(ref::all_reduce(PerRank<std::int64_t>{{1, 2}, {2, 2}}, Op::mean),
            (PerRank<std::int64_t>{{1, 2}, {1, 2}}));
  EXPECT_EQ(ref::all_reduce(PerRank<std::int32_t>{{-1}, {-2}}, Op::mean),
            (PerRank<std::int32_t>{{-1}, {-1}}));  // -3/2 = -1.5 -> -1, not floored to -2
  EXPECT_EQ(ref::all_reduce(PerRank<std::int32_t>{{1}, {2}, {3}}, Op::mean),
            (PerRank<std::int32_t>{{2}, {2}, {2}}));
  EXPECT_EQ(ref::all_reduce(PerRank<std::int64_t>{{1, 2}, {1, 2}, {2, 2}}, Op::mean),
            (PerRank<std::int64_t>{{1, 2}, {1, 2}, {1, 2}}));
  EXPECT_EQ(ref::all_reduce(PerRank<std::int8_t>{{-7}, {0}, {0}}, Op::mean),
            (PerRank<std::int8_t>{{-2}, {-2}, {-2}}));  // -7/3 = -2.33 -> -2
  // Exact where MMEngine's float32 path is not: 2 * 16777217 / 2.
  EXPECT_EQ(ref::all_reduce(PerRank<std::int64_t>{{16777217}, {16777217}}, Op::mean),
            (PerRank<std::int64_t>{{16777217}, {16777217}}));
}

TEST(ReduceOp, IntegerSumAndMeanWrap) {
  // int8: 100 + 100 = 200 wraps to -56; mean -56 / 2 = -28.
  EXPECT_EQ(ref::all_reduce(PerRank<std::int8_t>{{100}, {100}}, Op::sum),
            (PerRank<std::int8_t>{{-56}, {-56}}));
  EXPECT_EQ(ref::all_reduce(PerRank<std::int8_t>{{100}, {100}}, Op::mean),
            (PerRank<std::int8_t>{{-28}, {-28}}));
  EXPECT_EQ(ref::all_reduce(PerRank<std::uint8_t>{{1, 2, 3}, {200, 200, 200}}, Op::sum),
            (PerRank<std::uint8_t>{{201, 202, 203}, {201, 202, 203}}));
  EXPECT_EQ(ref::all_reduce(PerRank<std::uint8_t>{{100}, {200}}, Op::sum),
            (PerRank<std::uint8_t>{{44}, {44}}));  // 300 - 256
  const std::int32_t i32max = std::numeric_limits<std::int32_t>::max();
  const std::int32_t i32min = std::numeric_limits<std::int32_t>::min();
  EXPECT_EQ(ref::all_reduce(PerRank<std::int32_t>{{i32max}, {1}}, Op::sum),
            (PerRank<std::int32_t>{{i32min}, {i32min}}));
  EXPECT_EQ(ref::all_reduce(PerRank<std::uint32_t>{{4294967295u}, {1u}}, Op::mean),
            (PerRank<std::uint32_t>{{0u}, {0u}}));  // sum wraps to 0
  EXPECT_EQ(ref::all_reduce(PerRank<std::uint64_t>{{18446744073709551615ull}, {2ull}}, Op::sum),
            (PerRank<std::uint64_t>{{1ull}, {1ull}}));
}

TEST(ReduceOp, IntegerProductWraps) {
  EXPECT_EQ(ref::all_reduce(PerRank<std::int8_t>{{16}, {16}}, Op::product),
            (PerRank<std::int8_t>{{0}, {0}}));  // 256
  EXPECT_EQ(ref::all_reduce(PerRank<std::int8_t>{{-128}, {-1}}, Op::product),
            (PerRank<std::int8_t>{{-128}, {-128}}));  // 128 wraps to -128
  EXPECT_EQ(ref::all_reduce(PerRank<std::uint8_t>{{255}, {255}}, Op::product),
            (PerRank<std::uint8_t>{{1}, {1}}));  // 65025 = 254 * 256 + 1
  const std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(ref::all_reduce(PerRank<std::int64_t>{{i64max}, {2}}, Op::product),
            (PerRank<std::int64_t>{{-2}, {-2}}));
  EXPECT_EQ(ref::all_reduce(PerRank<std::uint32_t>{{65536u}, {65536u}, {3u}}, Op::product),
            (PerRank<std::uint32_t>{{0u}, {0u}, {0u}}));
}

TEST(ReduceOp, IntegerMinMaxBitwiseSigned) {
  const PerRank<std::int8_t> in = {{-128, -1, 5}, {127, 1, -2}};
  EXPECT_EQ(ref::all_reduce(in, Op::min)[0], (std::vector<std::int8_t>{-128, -1, -2}));
  EXPECT_EQ(ref::all_reduce(in, Op::max)[0], (std::vector<std::int8_t>{127, 1, 5}));
  EXPECT_EQ(ref::all_reduce(in, Op::band)[0], (std::vector<std::int8_t>{0, 1, 4}));
  EXPECT_EQ(ref::all_reduce(in, Op::bor)[0], (std::vector<std::int8_t>{-1, -1, -1}));
  EXPECT_EQ(ref::all_reduce(in, Op::bxor)[0], (std::vector<std::int8_t>{-1, -2, -5}));
  const PerRank<std::uint8_t> u = {{255, 0x0F}, {0, 0xF0}, {7, 0xFF}};
  EXPECT_EQ(ref::all_reduce(u, Op::min)[2], (std::vector<std::uint8_t>{0, 0x0F}));
  EXPECT_EQ(ref::all_reduce(u, Op::max)[2], (std::vector<std::uint8_t>{255, 0xFF}));
  EXPECT_EQ(ref::all_reduce(u, Op::bxor)[2], (std::vector<std::uint8_t>{248, 0x00}));
}

TEST(ReduceOp, FloatFoldsInRankOrder) {
  // (1e8 + -1e8) + 1 = 1, but 1e8 + (-1e8 + 1) = 0 in float: the fold goes rank 0, 1, 2.
  EXPECT_EQ(ref::all_reduce(PerRank<float>{{1.0e8f}, {-1.0e8f}, {1.0f}}, Op::sum)[0][0], 1.0f);
  // The same values in another rank order: (1 + 1e8) + -1e8 = 0.
  EXPECT_EQ(ref::all_reduce(PerRank<float>{{1.0f}, {1.0e8f}, {-1.0e8f}}, Op::sum)[0][0], 0.0f);
  // double: (0.1 + 0.2) + 0.3 = 0.6000000000000001, while 0.1 + (0.2 + 0.3) would be 0.6.
  EXPECT_EQ(ref::all_reduce(PerRank<double>{{0.1}, {0.2}, {0.3}}, Op::sum)[1][0],
            0.6000000000000001);
  EXPECT_EQ(ref::all_reduce(PerRank<double>{{0.3}, {0.2}, {0.1}}, Op::sum)[1][0], 0.6);
}

TEST(ReduceOp, FloatMeanAndProduct) {
  EXPECT_EQ(ref::all_reduce(PerRank<float>{{1.0f}, {2.0f}, {4.0f}}, Op::mean)[0][0], 7.0f / 3.0f);
  EXPECT_EQ(ref::all_reduce(PerRank<double>{{1.5}, {0.5}}, Op::mean)[1][0], 1.0);
  EXPECT_EQ(ref::all_reduce(PerRank<float>{{1.5f}, {-2.0f}, {3.0f}}, Op::product)[2][0], -9.0f);
}

TEST(ReduceOp, HalfSumRoundsEveryStep) {
  // 2048 + 1 = 2049 rounds to 2048 (tie to even), + 1 again gives 2048 again;
  // rounding once at the end would give 2050.
  EXPECT_EQ(ref::all_reduce(PerRank<Half>{{Half{0x6800}}, {Half{0x3C00}}, {Half{0x3C00}}}, Op::sum),
            (PerRank<Half>{{Half{0x6800}}, {Half{0x6800}}, {Half{0x6800}}}));
  // Rank order 1, 1, 2048: 1 + 1 = 2, 2 + 2048 = 2050 exactly.
  EXPECT_EQ(ref::all_reduce(PerRank<Half>{{Half{0x3C00}}, {Half{0x3C00}}, {Half{0x6800}}}, Op::sum),
            (PerRank<Half>{{Half{0x6801}}, {Half{0x6801}}, {Half{0x6801}}}));
  // bfloat16: 256 + 1 rounds to 256 each step.
  EXPECT_EQ(ref::all_reduce(PerRank<BFloat16>{{BFloat16{0x4380}}, {BFloat16{0x3F80}}, {BFloat16{0x3F80}}},
                            Op::sum)[0][0],
            BFloat16{0x4380});
  // Overflow in a step: 65504 + 65504 is inf in half.
  EXPECT_EQ(ref::all_reduce(PerRank<Half>{{Half{0x7BFF}}, {Half{0x7BFF}}}, Op::sum)[0][0], Half{0x7C00});
}

TEST(ReduceOp, HalfMeanAndProduct) {
  // 1 + 2 + 2 = 5; 5 / 3 = 1.6666... -> 1 + 683/1024 (0x3EAB).
  EXPECT_EQ(ref::all_reduce(PerRank<Half>{{Half{0x3C00}}, {Half{0x4000}}, {Half{0x4000}}}, Op::mean)[0][0],
            Half{0x3EAB});
  // Mean divides the rounded sum: 2048 + 1 -> 2048, / 2 = 1024 (0x6400), not 1024.5.
  EXPECT_EQ(ref::all_reduce(PerRank<Half>{{Half{0x6800}}, {Half{0x3C00}}}, Op::mean)[0][0], Half{0x6400});
  // bfloat16 product: 3 * 3 * 3 = 27 (0x41D8).
  EXPECT_EQ(ref::all_reduce(PerRank<BFloat16>{{BFloat16{0x4040}}, {BFloat16{0x4040}}, {BFloat16{0x4040}}},
                            Op::product)[1][0],
            BFloat16{0x41D8});
  // bfloat16 product rounds: 1.0078125 (0x3F81) squared = 1.01568603515625 -> 1.015625 (0x3F82).
  EXPECT_EQ(ref::all_reduce(PerRank<BFloat16>{{BFloat16{0x3F81}}, {BFloat16{0x3F81}}}, Op::product)[0][0],
            BFloat16{0x3F82});
}

TEST(ReduceOp, MinMaxPropagateNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto mn = ref::all_reduce(PerRank<float>{{nan, 1.0f, 2.0f}, {1.0f, nan, 0.5f}}, Op::min);
  EXPECT_TRUE(std::isnan(mn[0][0]));
  EXPECT_TRUE(std::isnan(mn[1][1]));
  EXPECT_EQ(mn[0][2], 0.5f);
  const auto mx = ref::all_reduce(PerRank<double>{{1.0}, {std::nan("")}, {3.0}}, Op::max);
  EXPECT_TRUE(std::isnan(mx[2][0]));  // NaN in the middle rank survives the later comparison
  const auto hmin = ref::all_reduce(PerRank<Half>{{Half{0x3C00}}, {Half{0x7E00}}}, Op::min);
  EXPECT_EQ(hmin[0][0], Half{0x7E00});
  const auto bmax = ref::all_reduce(PerRank<BFloat16>{{BFloat16{0x7FC0}}, {BFloat16{0x4000}}}, Op::max);
  EXPECT_EQ(bmax[1][0], BFloat16{0x7FC0});
}

TEST(ReduceOp, MinMaxOrderSignedZeros) {
  const auto mn = ref::all_reduce(PerRank<float>{{0.0f, -0.0f}, {-0.0f, 0.0f}}, Op::min);
  EXPECT_TRUE(std::signbit(mn[0][0]));
  EXPECT_TRUE(std::signbit(mn[0][1]));
  const auto mx = ref::all_reduce(PerRank<float>{{0.0f, -0.0f}, {-0.0f, 0.0f}}, Op::max);
  EXPECT_FALSE(std::signbit(mx[0][0]));
  EXPECT_FALSE(std::signbit(mx[0][1]));
  EXPECT_EQ(ref::all_reduce(PerRank<Half>{{Half{0x0000}}, {Half{0x8000}}}, Op::min)[0][0], Half{0x8000});
  EXPECT_EQ(ref::all_reduce(PerRank<Half>{{Half{0x8000}}, {Half{0x0000}}}, Op::max)[0][0], Half{0x0000});
  EXPECT_EQ(ref::all_reduce(PerRank<Half>{{Half{0xBC00}}, {Half{0x3C00}}}, Op::min)[0][0], Half{0xBC00});
}

TEST(ReduceOp, OpAllowed) {
  EXPECT_TRUE(ref::op_allowed<std::int32_t>(Op::bxor));
  EXPECT_TRUE(ref::op_allowed<std::uint8_t>(Op::mean));
  EXPECT_TRUE(ref::op_allowed<float>(Op::max));
  EXPECT_FALSE(ref::op_allowed<float>(Op::band));
  EXPECT_FALSE(ref::op_allowed<double>(Op::bor));
  EXPECT_FALSE(ref::op_allowed<Half>(Op::bxor));
  EXPECT_FALSE(ref::op_allowed<BFloat16>(Op::band));
}

template <class T>
void expect_bitwise_rejected(Op op, const std::string& type) {
  try {
    (void)ref::all_reduce(PerRank<T>{{T{}}, {T{}}}, op);
    ADD_FAILURE() << "no exception for " << ref::to_string(op) << " on " << type;
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(std::string(ref::to_string(op))), std::string::npos) << msg;
    EXPECT_NE(msg.find(type), std::string::npos) << msg;
  }
}

TEST(ReduceOp, BitwiseOnFloatRejected) {
  expect_bitwise_rejected<float>(Op::band, "float32");
  expect_bitwise_rejected<double>(Op::bor, "float64");
  expect_bitwise_rejected<Half>(Op::bxor, "float16");
  expect_bitwise_rejected<BFloat16>(Op::band, "bfloat16");
  EXPECT_THROW((void)ref::reduce(PerRank<float>{{1.0f}}, Op::bxor, 0), std::invalid_argument);
  EXPECT_THROW((void)ref::reduce_scatter(PerRank<double>{{1.0}}, Op::band), std::invalid_argument);
  EXPECT_THROW((void)ref::combine(Op::bor, 1.0f, 2.0f), std::invalid_argument);
}

TEST(ReduceOp, FoldAndFinishMean) {
  const std::vector<std::int32_t> v = {7, -3, 5};
  EXPECT_EQ(ref::fold(std::span<const std::int32_t>(v), Op::sum), 9);
  EXPECT_EQ(ref::fold(std::span<const std::int32_t>(v), Op::mean), 3);
  EXPECT_EQ(ref::fold(std::span<const std::int32_t>(v), Op::min), -3);
  EXPECT_EQ(ref::finish_mean<std::int8_t>(-7, 2), -3);
  EXPECT_EQ(ref::finish_mean<std::int8_t>(100, 300), 0);  // world wider than int8 is still exact
  EXPECT_EQ(ref::finish_mean<std::uint64_t>(18446744073709551615ull, 5), 3689348814741910323ull);
  EXPECT_THROW((void)ref::fold(std::span<const float>(), Op::sum), std::invalid_argument);
}

}  // namespace
