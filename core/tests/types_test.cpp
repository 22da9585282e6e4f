// Unit tests for include/dist/types.hpp and errors.hpp: float16/bfloat16 conversions against
// hand-written bit patterns and exhaustive round trips, names and parsers of ops, dtypes, devices.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "dist/errors.hpp"
#include "dist/types.hpp"

namespace dist {
namespace {

std::uint16_t half_bits(float f) { return float16(f).bits; }
std::uint16_t bf16_bits(float f) { return bfloat16(f).bits; }
float half_value(std::uint16_t b) { return static_cast<float>(float16::from_bits(b)); }
float bf16_value(std::uint16_t b) { return static_cast<float>(bfloat16::from_bits(b)); }
float from_float_bits(std::uint32_t b) { return std::bit_cast<float>(b); }
std::uint32_t float_bits(float f) { return std::bit_cast<std::uint32_t>(f); }

TEST(Float16, ExactValues) {
  EXPECT_EQ(half_bits(1.0f), 0x3C00);
  EXPECT_EQ(half_bits(-2.0f), 0xC000);
  EXPECT_EQ(half_bits(0.5f), 0x3800);
  EXPECT_EQ(half_bits(65504.0f), 0x7BFF);          // largest finite
  EXPECT_EQ(half_bits(0x1p-14f), 0x0400);          // smallest normal
  EXPECT_EQ(half_bits(0x1p-24f), 0x0001);          // smallest subnormal
  EXPECT_EQ(half_bits(0x3FFp-24f), 0x03FF);        // largest subnormal
  EXPECT_EQ(half_value(0x3C00), 1.0f);
  EXPECT_EQ(half_value(0x7BFF), 65504.0f);
  EXPECT_EQ(half_value(0x0001), 0x1p-24f);
  EXPECT_EQ(half_value(0x8001), -0x1p-24f);
  EXPECT_EQ(half_value(0x0200), 0x1p-15f);
  EXPECT_EQ(half_value(0x3555), 0x1.554p-2f);
}

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(half_bits(1.0f + 0x1p-11f), 0x3C00);    // tie between 0x3C00 and 0x3C01: even
  EXPECT_EQ(half_bits(1.0f + 3 * 0x1p-11f), 0x3C02);  // tie between 0x3C01 and 0x3C02: even
  EXPECT_EQ(half_bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);  // just above the tie
  EXPECT_EQ(half_bits(65519.0f), 0x7BFF);           // below the overflow tie
  EXPECT_EQ(half_bits(65520.0f), 0x7C00);           // tie with "65536": rounds to inf
  EXPECT_EQ(half_bits(1e10f), 0x7C00);
  EXPECT_EQ(half_bits(-1e10f), 0xFC00);
  EXPECT_EQ(half_bits(0x1p-25f), 0x0000);           // tie between 0 and 2^-24: even (0)
  EXPECT_EQ(half_bits(0x1.8p-25f), 0x0001);         // above it
  EXPECT_EQ(half_bits(0x3p-25f), 0x0002);           // tie between 1 and 2 units: even
  EXPECT_EQ(half_bits(0x1p-30f), 0x0000);
  EXPECT_EQ(half_bits(0x7FFp-25f), 0x0400);         // rounds up out of the subnormals
  EXPECT_EQ(half_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(half_bits(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

TEST(Float16, SpecialValues) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(half_bits(0.0f), 0x0000);
  EXPECT_EQ(half_bits(-0.0f), 0x8000);
  EXPECT_EQ(half_bits(inf), 0x7C00);
  EXPECT_EQ(half_bits(-inf), 0xFC00);
  EXPECT_EQ(float_bits(half_value(0x8000)), 0x8000'0000u);
  EXPECT_EQ(half_value(0x7C00), inf);
  EXPECT_EQ(half_value(0xFC00), -inf);
  const std::uint16_t nan = half_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_NE(nan & 0x0200, 0) << "a converted NaN is quiet";
  // A signaling float NaN whose payload lives only in the low bits still becomes a quiet NaN.
  EXPECT_EQ(half_bits(from_float_bits(0x7F80'0001u)), 0x7E00);
  EXPECT_EQ(half_bits(from_float_bits(0xFFC0'0000u)), 0xFE00);
  EXPECT_TRUE(std::isnan(half_value(0x7C01)));
  EXPECT_TRUE(std::isnan(half_value(0xFE00)));
}

TEST(BFloat16, ExactValuesAndRounding) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits(-2.0f), 0xC000);
  EXPECT_EQ(bf16_value(0x3F80), 1.0f);
  EXPECT_EQ(bf16_value(0x4049), 3.140625f);
  EXPECT_EQ(bf16_bits(from_float_bits(0x3F80'8000u)), 0x3F80);  // tie: stays even
  EXPECT_EQ(bf16_bits(from_float_bits(0x3F81'8000u)), 0x3F82);  // tie: up to even
  EXPECT_EQ(bf16_bits(from_float_bits(0x3F80'8001u)), 0x3F81);  // above the tie
  EXPECT_EQ(bf16_bits(from_float_bits(0x3F80'7FFFu)), 0x3F80);  // below the tie
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::max()), 0x7F80);  // rounds up to inf
  EXPECT_EQ(bf16_bits(from_float_bits(0x0000'8001u)), 0x0001);  // subnormals round too
  EXPECT_EQ(bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(bf16_bits(-std::numeric_limits<float>::infinity()), 0xFF80);
}

TEST(BFloat16, NaN) {
  const std::uint16_t nan = bf16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7F80, 0x7F80);
  EXPECT_NE(nan & 0x0040, 0);
  // A NaN whose payload is only in the dropped half must not round or truncate to inf.
  EXPECT_EQ(bf16_bits(from_float_bits(0x7F80'0001u)), 0x7FC0);
  EXPECT_EQ(bf16_bits(from_float_bits(0x7FFF'FFFFu)), 0x7FFF);
  EXPECT_TRUE(std::isnan(bf16_value(0x7F81)));
}

// Every bit pattern converts to float and back to the same bits; NaNs stay NaNs (quiet ones
// keep their exact bits, signaling ones come back quieted with the same payload).
template <class Half>
void check_round_trip(std::uint16_t exp_mask, std::uint16_t quiet_bit) {
  int mismatches = 0;
  for (std::uint32_t i = 0; i <= 0xFFFF; ++i) {
    const auto bits = static_cast<std::uint16_t>(i);
    const float f = static_cast<float>(Half::from_bits(bits));
    const std::uint16_t back = Half(f).bits;
    const bool is_nan = (bits & exp_mask) == exp_mask && (bits & ~exp_mask & 0x7FFF) != 0;
    const auto expected = static_cast<std::uint16_t>(is_nan ? bits | quiet_bit : bits);
    if (is_nan != std::isnan(f) || back != expected) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(Float16, ExhaustiveRoundTrip) { check_round_trip<float16>(0x7C00, 0x0200); }
TEST(BFloat16, ExhaustiveRoundTrip) { check_round_trip<bfloat16>(0x7F80, 0x0040); }

TEST(Float16, MonotonicOverPositiveFinite) {
  int out_of_order = 0;
  for (std::uint16_t b = 1; b < 0x7C00; ++b)
    if (!(half_value(static_cast<std::uint16_t>(b - 1)) < half_value(b))) ++out_of_order;
  EXPECT_EQ(out_of_order, 0);
}

TEST(DTypes, NamesSizesAndKinds) {
  const char* names[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                         "uint64", "float16", "bfloat16", "float32", "float64"};
  const std::size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  for (std::size_t i = 0; i < std::size(all_dtypes); ++i) {
    EXPECT_EQ(to_string(all_dtypes[i]), names[i]);
    EXPECT_EQ(dtype_size(all_dtypes[i]), sizes[i]) << names[i];
    EXPECT_EQ(is_floating(all_dtypes[i]), i >= 6) << names[i];
  }
  static_assert(dtype_v<const float16> == DType::float16);
  static_assert(dtype_v<long long> == DType::int64);
  static_assert(dtype_v<unsigned long long> == DType::uint64);
}

TEST(ReduceOps, NamesAndCaseInsensitiveParsing) {
  const ReduceOp ops[] = {ReduceOp::sum, ReduceOp::mean, ReduceOp::product, ReduceOp::min,
                          ReduceOp::max, ReduceOp::band, ReduceOp::bor,     ReduceOp::bxor};
  const char* lower[] = {"sum", "mean", "product", "min", "max", "band", "bor", "bxor"};
  const char* mixed[] = {"SUM", "Mean", "pRoDuCt", "MiN", "maX", "BAnd", "bOR", "BxOr"};
  for (std::size_t i = 0; i < std::size(ops); ++i) {
    EXPECT_EQ(to_string(ops[i]), lower[i]);
    EXPECT_EQ(parse_reduce_op(lower[i]), ops[i]) << lower[i];
    EXPECT_EQ(parse_reduce_op(mixed[i]), ops[i]) << mixed[i];
  }
  for (const char* bad : {"avg", "produce", "", "sum ", "prod", "AVG", "summ", "b and"})
    EXPECT_EQ(parse_reduce_op(bad), std::nullopt) << "'" << bad << "'";
}

TEST(ReduceOps, BitwiseOnlyOnIntegers) {
  for (DType dt : all_dtypes) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::product, ReduceOp::min,
                        ReduceOp::max})
      EXPECT_TRUE(op_allowed(op, dt)) << to_string(op) << " " << to_string(dt);
    for (ReduceOp op : {ReduceOp::band, ReduceOp::bor, ReduceOp::bxor}) {
      EXPECT_TRUE(is_bitwise(op));
      EXPECT_EQ(op_allowed(op, dt), !is_floating(dt)) << to_string(op) << " " << to_string(dt);
    }
  }
  EXPECT_FALSE(is_bitwise(ReduceOp::sum));
  EXPECT_FALSE(is_bitwise(ReduceOp::max));
}

TEST(OpArg, Resolves) {
  EXPECT_EQ(OpArg(ReduceOp::bxor).resolve(), ReduceOp::bxor);
  EXPECT_EQ(OpArg("Mean").resolve(), ReduceOp::mean);
  EXPECT_EQ(OpArg(std::string("product")).resolve(), ReduceOp::product);
  EXPECT_EQ(OpArg(std::string_view("MAX")).resolve(), ReduceOp::max);
}

TEST(OpArg, UnknownNameThrowsWithTheNames) {
  try {
    (void)OpArg("avg").resolve();
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(),
                 "reduce op should be one of sum, mean, product, min, max, band, bor, bxor, "
                 "but got 'avg'");
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
  EXPECT_THROW((void)OpArg("produce").resolve(), InvalidArgument);
  EXPECT_THROW((void)OpArg("").resolve(), InvalidArgument);
}

TEST(Backends, Names) {
  EXPECT_EQ(to_string(Backend::sim), "sim");
  EXPECT_EQ(to_string(Backend::gloo), "gloo");
  EXPECT_EQ(to_string(Backend::nccl), "nccl");
  EXPECT_EQ(to_string(Backend::mpi), "mpi");
}

TEST(Devices, NamesAndParsing) {
  EXPECT_EQ(to_string(Device::cpu()), "cpu");
  EXPECT_EQ(to_string(Device::cuda()), "cuda:0");
  EXPECT_EQ(to_string(Device::cuda(3)), "cuda:3");
  EXPECT_EQ(parse_device("cpu"), Device::cpu());
  EXPECT_EQ(parse_device("cuda"), Device::cuda(0));
  EXPECT_EQ(parse_device("cuda:0"), Device::cuda(0));
  EXPECT_EQ(parse_device("cuda:7"), Device::cuda(7));
  EXPECT_EQ(parse_device("cuda:12"), Device::cuda(12));
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  EXPECT_TRUE(parse_device("cuda:1").is_cuda());
}

TEST(Devices, RejectsMalformedNames) {
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:x", "cuda:1x", "cuda:+1", "CPU", "",
                          "cuda:99999999999", "cpu:0", " cpu"}) {
    try {
      (void)parse_device(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + std::string(bad) + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Errors, CodeNames) {
  EXPECT_EQ(to_string(ErrorCode::invalid_argument), "invalid_argument");
  EXPECT_EQ(to_string(ErrorCode::not_initialized), "not_initialized");
  EXPECT_EQ(to_string(ErrorCode::desync), "desync");
  EXPECT_EQ(to_string(ErrorCode::deadlock), "deadlock");
  EXPECT_EQ(to_string(ErrorCode::timeout), "timeout");
  EXPECT_EQ(to_string(ErrorCode::rank_failure), "rank_failure");
  EXPECT_EQ(to_string(ErrorCode::backend), "backend");
  EXPECT_EQ(TimeoutError("t", {1, 2}).missing_ranks(), (std::vector<int>{1, 2}));
  EXPECT_EQ(RankFailure("r", 3).failed_rank(), 3);
  EXPECT_EQ(BackendError("b", 5).vendor_code(), 5);
  EXPECT_EQ(DesyncError("d").code(), ErrorCode::desync);
}

}  // namespace
}  // namespace dist
