// Reduction ops of the reference: the Op enum, which ops each element type allows, and the
// element semantics (one combining step, the mean's final division, and the rank-order fold).
// Standard library only.
#pragma once

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "reference/half.hpp"

namespace dist::reference {

enum class Op { sum, mean, product, min, max, band, bor, bxor };

// The element types the reference supports (torch's int8, uint8, int32, uint32, int64, uint64,
// float16, bfloat16, float32, float64).
template <class T>
concept Element =
    std::same_as<T, std::int8_t> || std::same_as<T, std::uint8_t> || std::same_as<T, std::int32_t> ||
    std::same_as<T, std::uint32_t> || std::same_as<T, std::int64_t> ||
    std::same_as<T, std::uint64_t> || std::same_as<T, Half> || std::same_as<T, BFloat16> ||
    std::same_as<T, float> || std::same_as<T, double>;

template <class T>
concept IntegerElement = Element<T> && std::integral<T>;

template <class T>
concept Half16Element = std::same_as<T, Half> || std::same_as<T, BFloat16>;

constexpr std::string_view to_string(Op op) {
  switch (op) {
    case Op::sum: return "sum";
    case Op::mean: return "mean";
    case Op::product: return "product";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::band: return "band";
    case Op::bor: return "bor";
    case Op::bxor: return "bxor";
  }
  return "unknown op";
}

// torch's name of the element type, used in error messages.
template <Element T>
constexpr std::string_view type_name() {
  if constexpr (std::same_as<T, std::int8_t>) return "int8";
  else if constexpr (std::same_as<T, std::uint8_t>) return "uint8";
  else if constexpr (std::same_as<T, std::int32_t>) return "int32";
  else if constexpr (std::same_as<T, std::uint32_t>) return "uint32";
  else if constexpr (std::same_as<T, std::int64_t>) return "int64";
  else if constexpr (std::same_as<T, std::uint64_t>) return "uint64";
  else if constexpr (std::same_as<T, Half>) return "float16";
  else if constexpr (std::same_as<T, BFloat16>) return "bfloat16";
  else if constexpr (std::same_as<T, float>) return "float32";
  else return "float64";
}

constexpr bool is_bitwise(Op op) { return op == Op::band || op == Op::bor || op == Op::bxor; }

// Every op is legal on integers; the bitwise ops are illegal on floating types.
template <Element T>
constexpr bool op_allowed(Op op) {
  return IntegerElement<T> || !is_bitwise(op);
}

// Throws std::invalid_argument naming the op and the type when op is illegal for T.
template <Element T>
void require_op_allowed(Op op, std::string_view where = "reduce") {
  if (op_allowed<T>(op)) return;
  throw std::invalid_argument(std::string(where) + ": op " + std::string(to_string(op)) +
                              " is not allowed on element type " + std::string(type_name<T>()));
}

namespace detail {

// Integer sum and product wrap modulo 2^bits: computed in the unsigned type (at least as wide as
// unsigned int, so small types do not promote to signed int), then converted back (C++20 defines
// the conversion to a signed type as modular).
template <IntegerElement T>
T wrap_arith(Op op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  using Wide = std::common_type_t<U, unsigned int>;
  const auto x = static_cast<Wide>(static_cast<U>(a));
  const auto y = static_cast<Wide>(static_cast<U>(b));
  const Wide r = op == Op::product ? static_cast<Wide>(x * y) : static_cast<Wide>(x + y);
  return static_cast<T>(static_cast<U>(r));
}

template <IntegerElement T>
T integer_combine(Op op, T a, T b) {
  switch (op) {
    case Op::sum:
    case Op::mean:  // the mean accumulates the (wrapping) sum
    case Op::product: return wrap_arith(op, a, b);
    case Op::min: return b < a ? b : a;
    case Op::max: return a < b ? b : a;
    case Op::band: return static_cast<T>(a & b);
    case Op::bor: return static_cast<T>(a | b);
    case Op::bxor: return static_cast<T>(a ^ b);
  }
  throw std::invalid_argument("reduce: unknown op");
}

// IEEE 754-2019 minimum/maximum, as "is the result the first operand?": NaN wins (the first NaN
// operand is the result), and -0 < +0, so both ops are commutative and associative up to the NaN
// payload and any reduction order gives the same value.
template <std::floating_point F>
bool min_is_first(F x, F y) {
  if (std::isnan(x)) return true;
  if (std::isnan(y)) return false;
  if (x == y) return std::signbit(x) || !std::signbit(y);  // equal: they differ at most in zero's sign
  return x < y;
}

template <std::floating_point F>
bool max_is_first(F x, F y) {
  if (std::isnan(x)) return true;
  if (std::isnan(y)) return false;
  if (x == y) return !std::signbit(x) || std::signbit(y);
  return y < x;
}

// float and double: one step in the type's own arithmetic.
template <std::floating_point F>
F float_combine(Op op, F a, F b) {
  switch (op) {
    case Op::sum:
    case Op::mean: return a + b;
    case Op::product: return a * b;
    case Op::min: return min_is_first(a, b) ? a : b;
    case Op::max: return max_is_first(a, b) ? a : b;
    case Op::band:
    case Op::bor:
    case Op::bxor: break;
  }
  require_op_allowed<F>(op);
  throw std::invalid_argument("reduce: unknown op");
}

template <Half16Element H>
H round_to(float x) {
  if constexpr (std::same_as<H, Half>) return to_half(x);
  else return to_bfloat16(x);
}

// Half and BFloat16: compute in float, round back after every step. min/max return an operand.
template <Half16Element H>
H half_combine(Op op, H a, H b) {
  const float x = to_float(a);
  const float y = to_float(b);
  switch (op) {
    case Op::sum:
    case Op::mean: return round_to<H>(x + y);
    case Op::product: return round_to<H>(x * y);
    case Op::min: return min_is_first(x, y) ? a : b;
    case Op::max: return max_is_first(x, y) ? a : b;
    case Op::band:
    case Op::bor:
    case Op::bxor: break;
  }
  require_op_allowed<H>(op);
  throw std::invalid_argument("reduce: unknown op");
}

}  // namespace detail

// One combining step acc ∘ x. For Op::mean this is the sum step (see finish_mean).
// Throws std::invalid_argument when op is illegal for T.
template <Element T>
T combine(Op op, T acc, T x) {
  if constexpr (IntegerElement<T>) return detail::integer_combine(op, acc, x);
  else if constexpr (Half16Element<T>) return detail::half_combine(op, acc, x);
  else return detail::float_combine(op, acc, x);
}

// The mean from the rank-order sum over `world` ranks (world >= 1). Integers: the wrapped sum
// divided by world, truncated toward zero (in a 64-bit type of T's signedness, so a world larger
// than T's range is still exact). float/double: sum / T(world). Half/BFloat16:
// round(float(sum) / float(world)).
template <Element T>
T finish_mean(T sum, int world) {
  if (world < 1) throw std::invalid_argument("mean: world must be >= 1, got " + std::to_string(world));
  if constexpr (IntegerElement<T>) {
    if constexpr (std::is_signed_v<T>)
      return static_cast<T>(static_cast<std::int64_t>(sum) / static_cast<std::int64_t>(world));
    else
      return static_cast<T>(static_cast<std::uint64_t>(sum) / static_cast<std::uint64_t>(world));
  } else if constexpr (Half16Element<T>) {
    return detail::round_to<T>(to_float(sum) / static_cast<float>(world));
  } else {
    return sum / static_cast<T>(world);
  }
}

// Reduces one value per rank, given in rank order: acc = values[0]; acc = acc ∘ values[r] for
// r = 1..W-1; then, for mean, finish_mean(acc, W). Throws std::invalid_argument if values is
// empty or op is illegal for T.
template <Element T>
T fold(std::span<const T> values, Op op) {
  require_op_allowed<T>(op);
  if (values.empty()) throw std::invalid_argument("fold: needs at least one value (world >= 1)");
  T acc = values[0];
  for (std::size_t r = 1; r < values.size(); ++r) acc = combine(op, acc, values[r]);
  if (op == Op::mean) return finish_mean(acc, static_cast<int>(values.size()));
  return acc;
}

}  // namespace dist::reference
