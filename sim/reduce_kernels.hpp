// The sim's reduction loops: dst[i] = a[i] ∘ b[i] over a block, one loop per (op, dtype) so
// the compiler vectorises them, with exactly the element semantics of reference/reduce_op.hpp
// (wrapping integers, rank-order folds, per-step rounding of float16/bfloat16, NaN-first min/max).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "dist/types.hpp"

namespace dist::sim::kernels {

template <class T> constexpr bool is_half_v =
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// The arithmetic type a step computes in: float for the 16-bit floats, else the type itself.
template <class T> using compute_t = std::conditional_t<is_half_v<T>, float, T>;

template <class T> compute_t<T> widen(T v) {
  if constexpr (is_half_v<T>) return static_cast<float>(v);
  else return v;
}
template <class T> T narrow(compute_t<T> v) {
  if constexpr (is_half_v<T>) return T(v);
  else return v;
}

// min/max as IEEE 754-2019 minimum/maximum: the first NaN wins, and -0 < +0.
template <class F> bool min_keeps_first(F a, F b) {
  if (std::isnan(a)) return true;
  if (std::isnan(b)) return false;
  if (a == b) return std::signbit(a) || !std::signbit(b);
  return a < b;
}
template <class F> bool max_keeps_first(F a, F b) {
  if (std::isnan(a)) return true;
  if (std::isnan(b)) return false;
  if (a == b) return !std::signbit(a) || std::signbit(b);
  return b < a;
}

// Wrapping integer arithmetic, computed in an unsigned type at least as wide as unsigned int.
template <class T> T wrap_add(T a, T b) {
  using U = std::common_type_t<std::make_unsigned_t<T>, unsigned int>;
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(
      static_cast<U>(static_cast<std::make_unsigned_t<T>>(a)) +
      static_cast<U>(static_cast<std::make_unsigned_t<T>>(b))));
}
template <class T> T wrap_mul(T a, T b) {
  using U = std::common_type_t<std::make_unsigned_t<T>, unsigned int>;
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(
      static_cast<U>(static_cast<std::make_unsigned_t<T>>(a)) *
      static_cast<U>(static_cast<std::make_unsigned_t<T>>(b))));
}

template <class T> void fold_integer(ReduceOp op, T* dst, const T* a, const T* b, std::size_t n) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
      for (std::size_t i = 0; i < n; ++i) dst[i] = wrap_add(a[i], b[i]);
      return;
    case ReduceOp::product:
      for (std::size_t i = 0; i < n; ++i) dst[i] = wrap_mul(a[i], b[i]);
      return;
    case ReduceOp::min:
      for (std::size_t i = 0; i < n; ++i) dst[i] = b[i] < a[i] ? b[i] : a[i];
      return;
    case ReduceOp::max:
      for (std::size_t i = 0; i < n; ++i) dst[i] = a[i] < b[i] ? b[i] : a[i];
      return;
    case ReduceOp::band:
      for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(a[i] & b[i]);
      return;
    case ReduceOp::bor:
      for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(a[i] | b[i]);
      return;
    case ReduceOp::bxor:
      for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(a[i] ^ b[i]);
      return;
  }
}

template <class T> void fold_floating(ReduceOp op, T* dst, const T* a, const T* b, std::size_t n) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
      for (std::size_t i = 0; i < n; ++i) dst[i] = narrow<T>(widen(a[i]) + widen(b[i]));
      return;
    case ReduceOp::product:
      for (std::size_t i = 0; i < n; ++i) dst[i] = narrow<T>(widen(a[i]) * widen(b[i]));
      return;
    case ReduceOp::min:
      for (std::size_t i = 0; i < n; ++i)
        dst[i] = min_keeps_first(widen(a[i]), widen(b[i])) ? a[i] : b[i];
      return;
    case ReduceOp::max:
      for (std::size_t i = 0; i < n; ++i)
        dst[i] = max_keeps_first(widen(a[i]), widen(b[i])) ? a[i] : b[i];
      return;
    case ReduceOp::band:
    case ReduceOp::bor:
    case ReduceOp::bxor:
      return;  // rejected by validation before any data moves
  }
}

// dst[i] = a[i] ∘ b[i] for i < n (dst may be a: acc = acc ∘ x is fold(op, acc, acc, x, n)).
template <class T> void fold(ReduceOp op, T* dst, const T* a, const T* b, std::size_t n) {
  if constexpr (std::is_integral_v<T>) fold_integer(op, dst, a, b, n);
  else fold_floating(op, dst, a, b, n);
}

// The mean's final division of a rank-order sum by the group size.
template <class T> void finish_mean(T* acc, std::size_t n, int world) {
  if constexpr (std::is_integral_v<T>) {
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    const auto w = static_cast<Wide>(world);
    for (std::size_t i = 0; i < n; ++i) acc[i] = static_cast<T>(static_cast<Wide>(acc[i]) / w);
  } else {
    const auto w = static_cast<compute_t<T>>(world);
    for (std::size_t i = 0; i < n; ++i) acc[i] = narrow<T>(widen(acc[i]) / w);
  }
}

}  // namespace dist::sim::kernels
