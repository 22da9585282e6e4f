// The bridge between dist and reference/ that every test uses: element and op mappings (written
// once), the ops a dtype allows, storage bits, and nccl-tests style reports of wrong elements.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dist/types.hpp"
#include "reference/collectives.hpp"

namespace test_support {

namespace ref = dist::reference;
template <class T> using PerRank = std::vector<std::vector<T>>;

template <class T> inline constexpr bool is_half_v =
    std::is_same_v<T, dist::float16> || std::is_same_v<T, dist::bfloat16>;
template <class T> inline constexpr bool is_float_v = is_half_v<T> || std::is_floating_point_v<T>;

// The reference's element type for a dist element type (the 16-bit floats map by their bits).
template <class T> struct RefType { using type = T; };
template <> struct RefType<dist::float16> { using type = ref::Half; };
template <> struct RefType<dist::bfloat16> { using type = ref::BFloat16; };
template <class T> using ref_t = typename RefType<T>::type;

template <class T> ref_t<T> to_ref(T v) {
  if constexpr (is_half_v<T>) return ref_t<T>{v.bits};
  else return v;
}
template <class T> T from_ref(ref_t<T> v) {
  if constexpr (is_half_v<T>) return T::from_bits(v.bits);
  else return v;
}
template <class T> std::vector<ref_t<T>> to_ref(const std::vector<T>& v) {
  std::vector<ref_t<T>> out;
  out.reserve(v.size());
  for (const T& x : v) out.push_back(to_ref(x));
  return out;
}
template <class T> std::vector<T> from_ref(const std::vector<ref_t<T>>& v) {
  std::vector<T> out;
  out.reserve(v.size());
  for (const auto& x : v) out.push_back(from_ref<T>(x));
  return out;
}
template <class T> ref::PerRank<ref_t<T>> to_ref(const PerRank<T>& in) {
  ref::PerRank<ref_t<T>> out;
  for (const auto& v : in) out.push_back(to_ref(v));
  return out;
}
template <class T> PerRank<T> from_ref(const ref::PerRank<ref_t<T>>& in) {
  PerRank<T> out;
  for (const auto& v : in) out.push_back(from_ref<T>(v));
  return out;
}

inline ref::Op to_ref(dist::ReduceOp op) {
  switch (op) {
    case dist::ReduceOp::sum: return ref::Op::sum;
    case dist::ReduceOp::mean: return ref::Op::mean;
    case dist::ReduceOp::product: return ref::Op::product;
    case dist::ReduceOp::min: return ref::Op::min;
    case dist::ReduceOp::max: return ref::Op::max;
    case dist::ReduceOp::band: return ref::Op::band;
    case dist::ReduceOp::bor: return ref::Op::bor;
    case dist::ReduceOp::bxor: return ref::Op::bxor;
  }
  return ref::Op::sum;
}

inline constexpr dist::ReduceOp all_ops[] = {
    dist::ReduceOp::sum, dist::ReduceOp::mean, dist::ReduceOp::product, dist::ReduceOp::min,
    dist::ReduceOp::max, dist::ReduceOp::band, dist::ReduceOp::bor,  dist::ReduceOp::bxor};

// The ops defined for T (every op for integers; no bitwise op for floats).
template <class T> std::vector<dist::ReduceOp> ops_for() {
  std::vector<dist::ReduceOp> out;
  for (auto op : all_ops)
    if (dist::op_allowed(op, dist::dtype_v<T>)) out.push_back(op);
  return out;
}

// The storage bits of a value, widened to 64 bits, and back.
template <class T> std::uint64_t bits_of(T v) {
  if constexpr (is_half_v<T>) {
    return v.bits;
  } else {
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
  }
}
template <class T> T from_bits(std::uint64_t b) {
  if constexpr (is_half_v<T>) {
    return T::from_bits(static_cast<std::uint16_t>(b));
  } else {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
  }
}
template <class T> std::vector<std::uint64_t> bits_of(const std::vector<T>& v) {
  std::vector<std::uint64_t> out;
  out.reserve(v.size());
  for (const T& x : v) out.push_back(bits_of(x));
  return out;
}
template <class T> bool is_nan(T v) {
  if constexpr (is_half_v<T>) return std::isnan(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}
// Equal bit patterns; any two NaNs count as equal.
template <class T> bool same_bits(T a, T b) {
  return bits_of(a) == bits_of(b) || (is_nan(a) && is_nan(b));
}
template <class T> bool same_values(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i])) return false;
  return true;
}

template <class T> double as_double(T v) {
  if constexpr (is_half_v<T>) return static_cast<double>(static_cast<float>(v));
  else return static_cast<double>(v);
}

// A value as text: integers in decimal, floats as their value and bits ("-0 (0x8000)").
template <class T> std::string show_value(T v) {
  if constexpr (std::is_integral_v<T>) {
    return std::is_signed_v<T> ? std::to_string(static_cast<long long>(v))
                               : std::to_string(static_cast<unsigned long long>(v));
  } else {
    char text[64];
    std::snprintf(text, sizeof text, "%.9g (0x%llx)", as_double(v),
                  static_cast<unsigned long long>(bits_of(v)));
    return text;
  }
}

// nccl-tests style: nothing when equal (bit for bit, or within `tolerance` for floats when it is
// above 0), else how many elements are wrong and the first few.
template <class T>
std::optional<std::string> differences(const std::vector<T>& actual, const std::vector<T>& expected,
                                       double tolerance = 0) {
  if (actual.size() != expected.size())
    return "size " + std::to_string(actual.size()) + ", expected " + std::to_string(expected.size());
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (same_bits(actual[i], expected[i])) continue;
    if (tolerance > 0 && std::fabs(as_double(actual[i]) - as_double(expected[i])) <= tolerance)
      continue;
    if (wrong++ < 4)
      first += "\n    [" + std::to_string(i) + "] got " + show_value(actual[i]) + ", expected " +
               show_value(expected[i]);
  }
  if (wrong == 0) return std::nullopt;
  return std::to_string(wrong) + " of " + std::to_string(actual.size()) + " elements wrong:" + first;
}

// Per part (a rank's output, by default): which parts are wrong, and how.
template <class T>
std::optional<std::string> differences(const PerRank<T>& actual, const PerRank<T>& expected,
                                       std::string_view part = "rank") {
  if (actual.size() != expected.size())
    return std::to_string(actual.size()) + " " + std::string(part) + "s, expected " +
           std::to_string(expected.size());
  std::string out;
  for (std::size_t r = 0; r < actual.size(); ++r)
    if (auto m = differences(actual[r], expected[r]))
      out += "\n  " + std::string(part) + " " + std::to_string(r) + ": " + *m;
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace test_support
