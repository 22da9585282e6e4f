// Test inputs, seeded by (rank, count, salt) so any process can make any rank's input:
// exact-sum inputs (equal results in every reduction order) and any-bits inputs (edge values,
// NaNs, random bit patterns) for backends that fold in rank order as the reference does.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

#include "testing/reference_bridge.hpp"

namespace test_support {

// Exact-sum inputs: integers over their whole range (wrapping is order-independent); floats in
// {-2, ..., 2}, whose sums and products over up to 8 ranks are exact in every type and order.
template <class T>
std::vector<T> exact_sum_input(int rank, std::size_t count, std::uint64_t salt) {
  std::mt19937_64 rng(salt * 1000003u + static_cast<std::uint64_t>(rank));
  std::vector<T> v(count);
  for (auto& x : v) {
    if constexpr (std::is_integral_v<T>) x = static_cast<T>(rng());
    else x = T(static_cast<float>(static_cast<int>(rng() % 5) - 2));
  }
  return v;
}

// Edge values per type: wrap-around and sign extremes for integers; ±0, NaNs, infinities,
// extremes, subnormals and values whose sum depends on the order for floats.
template <class T>
std::vector<T> specials() {
  if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    return {T(0),
            T(1),
            static_cast<T>(-1),
            T(2),
            static_cast<T>(-2),
            L::max(),
            L::min(),
            static_cast<T>(L::max() - 1),
            static_cast<T>(L::min() + 1),
            T(3),
            T(7),
            T(100)};
  } else if constexpr (is_half_v<T>) {
    // Arrays, not initializer_lists: a list's backing array would die with the ?: expression.
    constexpr std::array<std::uint16_t, 12> f16_bits{0x0000, 0x8000, 0x7E00, 0xFE01,
                                                     0x7C00, 0xFC00, 0x3C00, 0xBC00,
                                                     0x7BFF, 0x0001, 0x6800, 0x1400};
    constexpr std::array<std::uint16_t, 12> bf16_bits{0x0000, 0x8000, 0x7FC0, 0xFFC1,
                                                      0x7F80, 0xFF80, 0x3F80, 0xBF80,
                                                      0x7F7F, 0x0001, 0x4380, 0x3380};
    const auto& bits = std::is_same_v<T, dist::float16> ? f16_bits : bf16_bits;
    std::vector<T> out;
    for (std::uint16_t b : bits) out.push_back(T::from_bits(b));
    return out;
  } else {
    using L = std::numeric_limits<T>;
    return {T(0), -T(0), L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(),
            T(1), T(-1), L::max(),       L::denorm_min(), T(1e8),        L::epsilon() / 2};
  }
}

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A finite value of moderate magnitude in [2^-4, 2^5) (random sign, mantissa and exponent).
template <class T>
T moderate(std::uint64_t h) {
  const auto exponent = static_cast<std::uint32_t>(123 + (h >> 23) % 9);
  const auto f = std::bit_cast<float>(
      static_cast<std::uint32_t>(((h >> 40) & 1) << 31 | exponent << 23 | (h & 0x7FFFFF)));
  if constexpr (is_half_v<T>) return T(f);
  else if constexpr (std::is_same_v<T, double>)
    return static_cast<double>(f) + static_cast<double>(h >> 44) * 1e-12;
  else return f;
}

// Any-bits input of `count` elements for case `salt`. The first elements run through every
// combination of specials on ranks 0..2 (element i holds digit `rank` of i in base #specials);
// later ones mix random bit patterns with moderate values.
template <class T>
std::vector<T> make_any_bits_input(int rank, std::size_t count, std::uint64_t salt) {
  const auto sp = specials<T>();
  const std::size_t s = sp.size();
  const std::size_t combos = s * s * s;
  std::vector<T> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t h =
        mix(salt * 0x100000001B3ull + static_cast<std::uint64_t>(rank) * 7919u + i);
    if (i < combos && rank < 3) {
      std::size_t digit = i;
      for (int k = 0; k < rank; ++k) digit /= s;
      out[i] = sp[(digit + salt) % s];
    } else if (i < combos || (h & 3) == 0) {
      out[i] = sp[(h >> 8) % s];
    } else if constexpr (std::is_integral_v<T>) {
      out[i] = static_cast<T>(h >> 3);
    } else if ((h & 3) == 1) {
      out[i] = from_bits<T>(h >> 5);
    } else {
      out[i] = moderate<T>(h >> 2);
    }
  }
  return out;
}

// Large inputs are made once per test (the ranks and the expected results ask for the same ones);
// clear_input_cache() drops them (a test fixture's TearDown).
struct InputCache {
  std::mutex mutex;
  std::map<std::tuple<int, int, std::size_t, std::uint64_t>, std::shared_ptr<const void>> entries;
};
inline InputCache& input_cache() {
  static InputCache cache;
  return cache;
}
inline void clear_input_cache() {
  std::lock_guard lock(input_cache().mutex);
  input_cache().entries.clear();
}

template <class T>
std::vector<T> any_bits_input(int rank, std::size_t count, std::uint64_t salt = 0) {
  if (count < 1000) return make_any_bits_input<T>(rank, count, salt);
  InputCache& cache = input_cache();
  const auto key = std::tuple{static_cast<int>(dist::dtype_v<T>), rank, count, salt};
  std::shared_ptr<const void> entry;
  {
    std::lock_guard lock(cache.mutex);
    if (auto it = cache.entries.find(key); it != cache.entries.end()) entry = it->second;
  }
  if (!entry) {
    auto made = std::make_shared<const std::vector<T>>(make_any_bits_input<T>(rank, count, salt));
    std::lock_guard lock(cache.mutex);
    entry = cache.entries.emplace(key, std::move(made)).first->second;
  }
  return *static_cast<const std::vector<T>*>(entry.get());
}

}  // namespace test_support
