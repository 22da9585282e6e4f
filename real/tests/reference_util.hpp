// Helpers the real backends' tests share: the dtypes to run typed tests over, the dist <->
// reference type mapping, exact (bitwise) comparison, and exact-sum test inputs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "dist/types.hpp"
#include "reference/collectives.hpp"

namespace real_test {

namespace ref = dist::reference;

using AllDTypes = ::testing::Types<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t,
                                   std::int64_t, std::uint64_t, dist::float16, dist::bfloat16,
                                   float, double>;

struct DTypeName {
  template <class T> static std::string GetName(int) {
    return std::string(dist::to_string(dist::dtype_v<T>));
  }
};

template <class T> inline constexpr bool is_half_v =
    std::is_same_v<T, dist::float16> || std::is_same_v<T, dist::bfloat16>;

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
template <class T> ref::PerRank<ref_t<T>> to_ref(const std::vector<std::vector<T>>& in) {
  ref::PerRank<ref_t<T>> out;
  for (const auto& v : in) {
    out.emplace_back();
    for (const T& x : v) out.back().push_back(to_ref(x));
  }
  return out;
}
template <class T> std::vector<std::vector<T>> from_ref(const ref::PerRank<ref_t<T>>& in) {
  std::vector<std::vector<T>> out;
  for (const auto& v : in) {
    out.emplace_back();
    for (const auto& x : v) out.back().push_back(from_ref<T>(x));
  }
  return out;
}

inline ref::Op to_ref(dist::ReduceOp op) { return static_cast<ref::Op>(static_cast<int>(op)); }

template <class T> std::vector<dist::ReduceOp> ops_for() {
  std::vector<dist::ReduceOp> out;
  for (int i = 0; i < 8; ++i) {
    const auto op = static_cast<dist::ReduceOp>(i);
    if (dist::op_allowed(op, dist::dtype_v<T>)) out.push_back(op);
  }
  return out;
}

// The storage bits of a value (exact comparison; NaN compares by its bits).
template <class T> std::uint64_t bits_of(T v) {
  if constexpr (is_half_v<T>) return v.bits;
  else {
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
  }
}
template <class T> std::vector<std::vector<std::uint64_t>> bits(const std::vector<std::vector<T>>& in) {
  std::vector<std::vector<std::uint64_t>> out;
  for (const auto& v : in) {
    out.emplace_back();
    for (const T& x : v) out.back().push_back(bits_of(x));
  }
  return out;
}

// Exact-sum inputs: integers use their whole range (wrapping is order-independent); floats use
// small integers in [-3, 3], whose sums and products are exact in every order.
template <class T> std::vector<T> input(int rank, std::size_t count, std::uint64_t salt) {
  std::mt19937_64 rng(salt * 1000003u + static_cast<std::uint64_t>(rank));
  std::vector<T> v(count);
  for (auto& x : v) {
    if constexpr (std::is_integral_v<T>) x = static_cast<T>(rng());
    else x = T(static_cast<float>(static_cast<int>(rng() % 7) - 3));
  }
  return v;
}

}  // namespace real_test
