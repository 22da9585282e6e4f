// The reference 16-bit float types: IEEE binary16 (Half) and bfloat16 (BFloat16), stored as raw
// bits, with float conversions written arithmetically (frexp/ldexp, round to nearest, ties to even)
// so they can cross-check the project's bit-level implementation. Standard library only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ios>
#include <limits>
#include <ostream>

namespace dist::reference {

// IEEE 754 binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits.
struct Half {
  std::uint16_t bits = 0;
  friend bool operator==(const Half&, const Half&) = default;  // compares the storage bits
};

// bfloat16: 1 sign bit, 8 exponent bits (bias 127), 7 fraction bits (the top half of a float).
struct BFloat16 {
  std::uint16_t bits = 0;
  friend bool operator==(const BFloat16&, const BFloat16&) = default;  // compares the storage bits
};

namespace detail {

// A binary interchange format with 16-bit storage, described by its field widths.
struct Format16 {
  int exp_bits;
  int man_bits;
  [[nodiscard]] constexpr int bias() const { return (1 << (exp_bits - 1)) - 1; }
  [[nodiscard]] constexpr int min_normal_exponent() const { return 1 - bias(); }
  [[nodiscard]] constexpr std::uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
  [[nodiscard]] constexpr std::uint32_t inf_bits() const {
    return ((1u << exp_bits) - 1u) << man_bits;
  }
};

inline constexpr Format16 half_format{.exp_bits = 5, .man_bits = 10};
inline constexpr Format16 bfloat16_format{.exp_bits = 8, .man_bits = 7};

// Rounds a non-negative double to an integer, ties to even, independent of the FP rounding mode.
inline double round_half_even(double s) {
  const double low = std::floor(s);
  const double diff = s - low;  // exact: s has few significant bits
  if (diff > 0.5) return low + 1.0;
  if (diff < 0.5) return low;
  return std::fmod(low, 2.0) == 0.0 ? low : low + 1.0;
}

// The storage bits of the format value nearest to x (ties to even). NaN becomes a quiet NaN with
// x's sign; values at or beyond the overflow threshold become infinity.
inline std::uint16_t encode(float x, Format16 f) {
  const std::uint32_t sign = std::signbit(x) ? f.sign_bit() : 0u;
  if (std::isnan(x)) return static_cast<std::uint16_t>(sign | f.inf_bits() | (1u << (f.man_bits - 1)));
  const double a = std::fabs(static_cast<double>(x));
  if (std::isinf(a)) return static_cast<std::uint16_t>(sign | f.inf_bits());
  if (a == 0.0) return static_cast<std::uint16_t>(sign);

  int e = 0;
  (void)std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1), so a = 1.xxx * 2^(e-1)
  // Exponent of one unit in the last place: normals have man_bits fraction bits below their
  // leading bit; subnormals share the quantum of the smallest normal binade.
  const int binade = std::max(e - 1, f.min_normal_exponent());
  const int quantum = binade - f.man_bits;
  // a == n * 2^quantum with n an integer in [0, 2^(man_bits+1)]; scaling by 2^-quantum is exact.
  const auto n = static_cast<std::uint64_t>(round_half_even(std::ldexp(a, -quantum)));
  // Encoded value: the exponent field counts binades above the subnormal range, and n includes the
  // implicit leading bit (2^man_bits), which adds one to that field. So field_base = field - 1 for
  // normals and 0 for subnormals; a carry out of the fraction (n == 2^(man_bits+1)) moves to the
  // next binade on its own, and one past the largest finite value lands on the infinity pattern.
  const auto field_base = static_cast<std::uint64_t>(binade + f.bias() - 1);
  const std::uint64_t magnitude = (field_base << f.man_bits) + n;
  if (magnitude >= f.inf_bits()) return static_cast<std::uint16_t>(sign | f.inf_bits());
  return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(magnitude));
}

// The exact float value of the storage bits (every binary16 and bfloat16 value is a float).
inline float decode(std::uint16_t bits, Format16 f) {
  const bool negative = (bits & f.sign_bit()) != 0;
  const int field = static_cast<int>((bits >> f.man_bits) & ((1u << f.exp_bits) - 1u));
  const int fraction = static_cast<int>(bits & ((1u << f.man_bits) - 1u));
  const int max_field = (1 << f.exp_bits) - 1;
  double magnitude = 0.0;
  if (field == max_field) {
    magnitude = fraction == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (field == 0) {  // subnormal or zero: fraction * 2^(min_normal - man_bits)
    magnitude = std::ldexp(static_cast<double>(fraction), f.min_normal_exponent() - f.man_bits);
  } else {  // normal: (2^man_bits + fraction) * 2^(field - bias - man_bits)
    magnitude = std::ldexp(static_cast<double>((1 << f.man_bits) + fraction),
                           field - f.bias() - f.man_bits);
  }
  return static_cast<float>(negative ? -magnitude : magnitude);
}

inline std::ostream& print_bits(std::ostream& os, const char* name, std::uint16_t bits, float v) {
  const auto flags = os.flags();
  os << name << "{0x" << std::hex << bits;
  os.flags(flags);
  return os << " = " << v << "}";
}

}  // namespace detail

inline float to_float(Half h) { return detail::decode(h.bits, detail::half_format); }
inline Half to_half(float x) { return Half{detail::encode(x, detail::half_format)}; }
inline float to_float(BFloat16 b) { return detail::decode(b.bits, detail::bfloat16_format); }
inline BFloat16 to_bfloat16(float x) { return BFloat16{detail::encode(x, detail::bfloat16_format)}; }

// Printers (GoogleTest picks these up), e.g. "Half{0x3c00 = 1}".
inline std::ostream& operator<<(std::ostream& os, Half h) {
  return detail::print_bits(os, "Half", h.bits, to_float(h));
}
inline std::ostream& operator<<(std::ostream& os, BFloat16 b) {
  return detail::print_bits(os, "BFloat16", b.bits, to_float(b));
}

}  // namespace dist::reference
