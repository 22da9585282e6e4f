// Hand-computed conversion tables for the reference Half (binary16) and BFloat16 types.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "reference/half.hpp"

namespace {

using dist::reference::BFloat16;
using dist::reference::Half;
using dist::reference::to_bfloat16;
using dist::reference::to_float;
using dist::reference::to_half;

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();

bool is_half_nan(std::uint16_t bits) { return (bits & 0x7C00u) == 0x7C00u && (bits & 0x03FFu) != 0; }
bool is_bf16_nan(std::uint16_t bits) { return (bits & 0x7F80u) == 0x7F80u && (bits & 0x007Fu) != 0; }

TEST(Half, ToFloatTable) {
  EXPECT_EQ(to_float(Half{0x0000}), 0.0f);
  EXPECT_FALSE(std::signbit(to_float(Half{0x0000})));
  EXPECT_EQ(to_float(Half{0x8000}), 0.0f);
  EXPECT_TRUE(std::signbit(to_float(Half{0x8000})));
  EXPECT_EQ(to_float(Half{0x3C00}), 1.0f);
  EXPECT_EQ(to_float(Half{0xBC00}), -1.0f);
  EXPECT_EQ(to_float(Half{0x4000}), 2.0f);
  EXPECT_EQ(to_float(Half{0x3555}), 0.333251953125f);  // 1365/4096
  EXPECT_EQ(to_float(Half{0x7BFF}), 65504.0f);
  EXPECT_EQ(to_float(Half{0x0001}), 5.9604644775390625e-08f);   // 2^-24, smallest subnormal
  EXPECT_EQ(to_float(Half{0x03FF}), 6.0975551605224609e-05f);   // 1023 * 2^-24, largest subnormal
  EXPECT_EQ(to_float(Half{0x0400}), 6.103515625e-05f);          // 2^-14, smallest normal
  EXPECT_EQ(to_float(Half{0x7C00}), inf);
  EXPECT_EQ(to_float(Half{0xFC00}), -inf);
  EXPECT_TRUE(std::isnan(to_float(Half{0x7E00})));
  EXPECT_TRUE(std::isnan(to_float(Half{0x7C01})));  // signalling pattern is NaN too
  EXPECT_TRUE(std::isnan(to_float(Half{0xFE00})));
}

TEST(Half, FromFloatExact) {
  EXPECT_EQ(to_half(0.0f), Half{0x0000});
  EXPECT_EQ(to_half(-0.0f), Half{0x8000});
  EXPECT_EQ(to_half(1.0f), Half{0x3C00});
  EXPECT_EQ(to_half(-2.0f), Half{0xC000});
  EXPECT_EQ(to_half(0.5f), Half{0x3800});
  EXPECT_EQ(to_half(65504.0f), Half{0x7BFF});
  EXPECT_EQ(to_half(2048.0f), Half{0x6800});
  EXPECT_EQ(to_half(2050.0f), Half{0x6801});
  EXPECT_EQ(to_half(5.9604644775390625e-08f), Half{0x0001});
  EXPECT_EQ(to_half(6.0975551605224609e-05f), Half{0x03FF});
  EXPECT_EQ(to_half(6.103515625e-05f), Half{0x0400});
  EXPECT_EQ(to_half(inf), Half{0x7C00});
  EXPECT_EQ(to_half(-inf), Half{0xFC00});
}

TEST(Half, FromFloatRoundsToNearestTiesToEven) {
  // Above 2048 the half spacing is 2: 2049 is a tie between 2048 (even) and 2050 (odd).
  EXPECT_EQ(to_half(2049.0f), Half{0x6800});
  EXPECT_EQ(to_half(2051.0f), Half{0x6802});  // tie between 2050 (odd) and 2052 (even)
  EXPECT_EQ(to_half(2049.5f), Half{0x6801});  // not a tie: nearer 2050
  // Around 1 the spacing is 2^-10.
  EXPECT_EQ(to_half(1.0f + 0x1p-11f), Half{0x3C00});      // tie -> 1.0 (even)
  EXPECT_EQ(to_half(1.0f + 3 * 0x1p-11f), Half{0x3C02});  // tie -> 1 + 2^-9 (even)
  EXPECT_EQ(to_half(1.0f + 0x1p-12f), Half{0x3C00});      // below half a spacing
  EXPECT_EQ(to_half(0.1f), Half{0x2E66});                 // 0.0999755859375
  // Overflow threshold is 65520 = 65504 + 16 (half the top spacing of 32): a tie to inf (even).
  EXPECT_EQ(to_half(65519.0f), Half{0x7BFF});
  EXPECT_EQ(to_half(65520.0f), Half{0x7C00});
  EXPECT_EQ(to_half(-65520.0f), Half{0xFC00});
  EXPECT_EQ(to_half(1.0e10f), Half{0x7C00});
}

TEST(Half, FromFloatSubnormalRounding) {
  EXPECT_EQ(to_half(0x1p-25f), Half{0x0000});           // half of 2^-24: tie -> 0 (even)
  EXPECT_EQ(to_half(-0x1p-25f), Half{0x8000});          // keeps the sign
  EXPECT_EQ(to_half(0x1.000002p-25f), Half{0x0001});    // just above the tie
  EXPECT_EQ(to_half(3 * 0x1p-25f), Half{0x0002});       // 1.5 * 2^-24: tie -> 2 (even)
  EXPECT_EQ(to_half(5 * 0x1p-25f), Half{0x0002});       // 2.5 * 2^-24: tie -> 2 (even)
  EXPECT_EQ(to_half(0x1p-30f), Half{0x0000});
  EXPECT_EQ(to_half(2047 * 0x1p-25f), Half{0x0400});    // 1023.5 * 2^-24 rounds up into the normals
  EXPECT_EQ(to_half(1.0e-30f), Half{0x0000});
}

TEST(Half, NanStaysNan) {
  EXPECT_TRUE(is_half_nan(to_half(nan_f).bits));
  EXPECT_TRUE(is_half_nan(to_half(-nan_f).bits));
  EXPECT_TRUE(is_half_nan(to_half(to_float(Half{0x7C01})).bits));
}

TEST(BFloat16, ToFloatTable) {
  EXPECT_EQ(to_float(BFloat16{0x0000}), 0.0f);
  EXPECT_TRUE(std::signbit(to_float(BFloat16{0x8000})));
  EXPECT_EQ(to_float(BFloat16{0x3F80}), 1.0f);
  EXPECT_EQ(to_float(BFloat16{0xC000}), -2.0f);
  EXPECT_EQ(to_float(BFloat16{0x7F7F}), 0x1.FEp127f);  // largest finite, 3.3895314e38
  EXPECT_EQ(to_float(BFloat16{0x0001}), 0x1p-133f);    // smallest subnormal
  EXPECT_EQ(to_float(BFloat16{0x0080}), 0x1p-126f);    // smallest normal
  EXPECT_EQ(to_float(BFloat16{0x7F80}), inf);
  EXPECT_EQ(to_float(BFloat16{0xFF80}), -inf);
  EXPECT_TRUE(std::isnan(to_float(BFloat16{0x7FC0})));
  EXPECT_TRUE(std::isnan(to_float(BFloat16{0x7F81})));
}

TEST(BFloat16, FromFloatTable) {
  EXPECT_EQ(to_bfloat16(0.0f), BFloat16{0x0000});
  EXPECT_EQ(to_bfloat16(-0.0f), BFloat16{0x8000});
  EXPECT_EQ(to_bfloat16(1.0f), BFloat16{0x3F80});
  EXPECT_EQ(to_bfloat16(65504.0f), BFloat16{0x4780});       // 65504 rounds to 65536
  EXPECT_EQ(to_bfloat16(0x1.FEp127f), BFloat16{0x7F7F});
  EXPECT_EQ(to_bfloat16(0x1p-133f), BFloat16{0x0001});
  EXPECT_EQ(to_bfloat16(0x1p-134f), BFloat16{0x0000});      // tie -> 0 (even)
  EXPECT_EQ(to_bfloat16(3 * 0x1p-134f), BFloat16{0x0002});  // tie -> 2 (even)
  EXPECT_EQ(to_bfloat16(0x1p-149f), BFloat16{0x0000});      // float's smallest subnormal
  EXPECT_EQ(to_bfloat16(inf), BFloat16{0x7F80});
  EXPECT_EQ(to_bfloat16(-inf), BFloat16{0xFF80});
  EXPECT_TRUE(is_bf16_nan(to_bfloat16(nan_f).bits));
  EXPECT_TRUE(is_bf16_nan(to_bfloat16(-nan_f).bits));
}

TEST(BFloat16, FromFloatRoundsToNearestTiesToEven) {
  EXPECT_EQ(to_bfloat16(257.0f), BFloat16{0x4380});            // spacing 2: tie -> 256 (even)
  EXPECT_EQ(to_bfloat16(259.0f), BFloat16{0x4382});            // tie -> 260 (even)
  EXPECT_EQ(to_bfloat16(1.0f + 0x1p-8f), BFloat16{0x3F80});     // tie -> 1.0
  EXPECT_EQ(to_bfloat16(1.0f + 3 * 0x1p-8f), BFloat16{0x3F82}); // tie -> 1 + 2^-6
  EXPECT_EQ(to_bfloat16(1.0f + 0x1p-8f + 0x1p-23f), BFloat16{0x3F81});  // just above the tie
  EXPECT_EQ(to_bfloat16(0.1f), BFloat16{0x3DCD});               // 0.10009765625
  // FLT_MAX is above the last finite bfloat16 by more than half a spacing (a tie would go up too).
  EXPECT_EQ(to_bfloat16(std::numeric_limits<float>::max()), BFloat16{0x7F80});
  EXPECT_EQ(to_bfloat16(0x1.FFp127f), BFloat16{0x7F80});        // exactly the tie: to inf (even)
  EXPECT_EQ(to_bfloat16(0x1.FEFFFEp127f), BFloat16{0x7F7F});    // just below the tie
}

TEST(Half16, EqualityIsOnBits) {
  EXPECT_EQ(Half{0x3C00}, Half{0x3C00});
  EXPECT_NE(Half{0x0000}, Half{0x8000});  // +0 and -0 differ as bits
  EXPECT_EQ(Half{0x7E00}, Half{0x7E00});  // NaN patterns compare equal to themselves
  EXPECT_NE(BFloat16{0x3F80}, BFloat16{0x3F81});
}

}  // namespace
