// Generators of the property suite, as rapidcheck values: cluster shapes, dtypes, reduce ops legal
// for a dtype, counts (0, non-divisible, large), roots, subgroups, permutations and per-rank
// inputs. Arbitrary<WorldShape> and Arbitrary<dist::DType> are the extension points.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <ostream>
#include <vector>

#include "props/backends.hpp"
#include "props/values.hpp"

namespace props {

// Which float inputs to draw. `exact`: every summation order gives the same result (small
// multiples of 1/4, or powers of two for product), so any backend compares exactly. `bitwise`:
// any bit pattern, NaN, -0, infinities and order-dependent sums (for bit-identical backends).
// Integers are exact in any order whatever their values (wrapping arithmetic).
enum class Values { exact, bitwise };

inline std::ostream& operator<<(std::ostream& os, Values v) {
  return os << (v == Values::exact ? "exact" : "bitwise");
}

// Per-rank data, printed compactly in counterexamples.
template <class T>
struct PerRankData {
  PerRank<T> ranks;
  friend std::ostream& operator<<(std::ostream& os, const PerRankData& d) {
    for (std::size_t r = 0; r < d.ranks.size(); ++r) {
      os << "\n  rank " << r << ": ";
      show_values(d.ranks[r], os);
    }
    return os;
  }
};

// A deterministic 64-bit mix (splitmix64), for data too large to draw element by element.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
T from_float(float x) {
  if constexpr (is_half_v<T>)
    return T(x);
  else
    return static_cast<T>(x);
}

// Edge values of a float type: ±0, NaNs, ±infinity, the extremes, the smallest subnormal.
template <class T>
std::vector<T> float_specials() {
  if constexpr (std::is_same_v<T, dist::float16>) {
    std::vector<T> out;
    for (std::uint16_t b : std::initializer_list<std::uint16_t>{
             0x0000, 0x8000, 0x7E00, 0xFE01, 0x7C00, 0xFC00, 0x7BFF, 0xFBFF, 0x0001})
      out.push_back(T::from_bits(b));
    return out;
  } else if constexpr (std::is_same_v<T, dist::bfloat16>) {
    std::vector<T> out;
    for (std::uint16_t b : std::initializer_list<std::uint16_t>{
             0x0000, 0x8000, 0x7FC0, 0xFFC1, 0x7F80, 0xFF80, 0x7F7F, 0xFF7F, 0x0001})
      out.push_back(T::from_bits(b));
    return out;
  } else {
    using L = std::numeric_limits<T>;
    return {T(0),           -T(0),    L::quiet_NaN(), -L::quiet_NaN(), L::infinity(),
            -L::infinity(), L::max(), -L::max(),      L::denorm_min()};
  }
}

// The exact-mode value for a hash: m/4 with |m| <= 32 (sums of 8 stay exact even in bfloat16),
// or for product a power of two in [1/2, 2] with a sign, or zero (products of 8 are exact).
template <class T>
T exact_from_hash(std::uint64_t h, dist::ReduceOp op) {
  if (op == dist::ReduceOp::product) {
    static constexpr float choices[] = {1.0f, 0.5f, 2.0f, -1.0f, -0.5f, -2.0f, 0.0f, 1.0f};
    return from_float<T>(choices[h % 8]);
  }
  const auto k = static_cast<int>(h % 65);  // 0, 1, 2, ... -> 0, -1/4, 1/4, ... (shrinks to 0)
  return from_float<T>(static_cast<float>(k % 2 == 0 ? k / 2 : -(k + 1) / 2) / 4.0f);
}

// One element from a hash (used for large counts and program inputs).
template <class T>
T value_from_hash(std::uint64_t h, Values mode, dist::ReduceOp op) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(h >> 7);
  } else {
    if (mode == Values::exact) return exact_from_hash<T>(h, op);
    const auto specials = float_specials<T>();
    switch (h % 4) {
      case 0:
        return specials[(h >> 8) % specials.size()];
      case 1:
        return from_bits<T>(h >> 2);
      default:
        return exact_from_hash<T>(h >> 3, op);
    }
  }
}

// `count` elements from a seed.
template <class T>
std::vector<T> fill(std::size_t count, std::uint64_t seed, Values mode, dist::ReduceOp op) {
  std::vector<T> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = value_from_hash<T>(mix(seed ^ mix(i)), mode, op);
  return out;
}

namespace gen {

// An integer in [min, max) drawn uniformly whatever the case's size (rapidcheck's inRange only
// uses a part of the range that grows with the size); it shrinks towards min.
template <class T>
rc::Gen<T> uniform(T min, T max) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(min, max));
}

// World sizes min..max (the two ends twice as often; shrinks towards min), split into every
// nodes x ranks-per-node factorisation (shrinks towards one node). `max_size` is lowered to what
// the running suite's backend runs here (current_max_ranks), never below min_size: a property
// that needs more ranks than that skips (PROPS_SKIP_BELOW_RANKS) or discards.
inline rc::Gen<WorldShape> world_shape(int min_size = 1, int max_size = 8) {
  // The bound is read as each case is drawn: rapidcheck keeps one Arbitrary<WorldShape>
  // generator for every suite.
  return rc::gen::mapcat(rc::gen::just(0), [=](int) {
    const int top = std::max(min_size, std::min(max_size, current_max_ranks()));
    const auto size = rc::gen::map(gen::uniform(min_size - 1, top + 2),
                                   [=](int n) { return std::clamp(n, min_size, top); });
    return rc::gen::mapcat(size, [](int n) {
      std::vector<int> divisors;
      for (int d = 1; d <= n; ++d)
        if (n % d == 0) divisors.push_back(d);
      return rc::gen::map(rc::gen::elementOf(divisors), [n](int nodes) {
        return WorldShape{nodes, n / nodes};
      });
    });
  });
}

inline rc::Gen<dist::DType> dtype() {
  return rc::gen::elementOf(std::vector(std::begin(dist::all_dtypes), std::end(dist::all_dtypes)));
}

// A reduce op defined for `dtype` (bitwise ops for integers only).
inline rc::Gen<dist::ReduceOp> op_for(dist::DType dtype) {
  std::vector<dist::ReduceOp> ops;
  for (int i = 0; i <= static_cast<int>(dist::ReduceOp::bxor); ++i)
    if (dist::op_allowed(static_cast<dist::ReduceOp>(i), dtype))
      ops.push_back(static_cast<dist::ReduceOp>(i));
  return rc::gen::elementOf(ops);
}

// Element counts: 0, small (often not divisible by the world size), medium, and large enough
// to span several of a backend's internal chunks.
// One uniform draw mapped monotonically onto the four ranges (weights 2 : 10 : 4 : 1), so that
// shrinking walks down through all of them to the smallest failing count.
inline rc::Gen<std::size_t> count() {
  return rc::gen::map(gen::uniform<std::size_t>(0, 17'000), [](std::size_t u) -> std::size_t {
    if (u < 2'000) return 0;
    if (u < 12'000) return 1 + (u - 2'000) * 16 / 10'000;         // 1..16
    if (u < 16'000) return 17 + (u - 12'000) * 283 / 4'000;       // 17..299
    return 20'000 + (u - 16'000) * 20;                            // 20000..39980
  });
}

inline rc::Gen<int> root(int world) { return gen::uniform(0, world); }

// A random permutation of 0..n-1 (shrinks towards the identity).
inline rc::Gen<std::vector<int>> permutation(int n) {
  return rc::gen::map(
      rc::gen::container<std::vector<int>>(static_cast<std::size_t>(n), gen::uniform(0, 4 * n)),
      [n](const std::vector<int>& keys) {
        std::vector<int> order(static_cast<std::size_t>(n));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
          return keys[static_cast<std::size_t>(a)] < keys[static_cast<std::size_t>(b)];
        });
        return order;
      });
}

// A non-empty subset of 0..world-1 of at least `min_size` ranks, in random order.
inline rc::Gen<std::vector<int>> subgroup(int world, int min_size = 1) {
  return rc::gen::mapcat(gen::uniform(min_size, world + 1), [world](int k) {
    return rc::gen::map(permutation(world), [k](std::vector<int> p) {
      p.resize(static_cast<std::size_t>(k));
      return p;
    });
  });
}

// One element: integers anywhere in their range (extremes often); floats per `mode`.
template <class T>
rc::Gen<T> value(Values mode, dist::ReduceOp op) {
  if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    return rc::gen::weightedOneOf<T>({{1, rc::gen::elementOf(std::vector<T>{
                                              T(0), T(1), static_cast<T>(-1), L::min(), L::max()})},
                                      {4, rc::gen::arbitrary<T>()}});
  } else {
    const auto exact = rc::gen::map(rc::gen::arbitrary<std::uint64_t>(),
                                    [op](std::uint64_t h) { return exact_from_hash<T>(h, op); });
    if (mode == Values::exact) return exact;
    using Bits =
        std::conditional_t<sizeof(T) == 2, std::uint16_t,
                           std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
    return rc::gen::weightedOneOf<T>(
        {{3, exact},
         {2, rc::gen::elementOf(float_specials<T>())},
         {2, rc::gen::map(rc::gen::arbitrary<Bits>(), [](Bits b) { return from_bits<T>(b); })}});
  }
}

// `world` ranks' inputs of `count` elements each: drawn element by element when small (so they
// shrink), else filled from a drawn seed.
template <class T>
rc::Gen<PerRankData<T>> inputs(int world, std::size_t count, Values mode, dist::ReduceOp op) {
  const auto w = static_cast<std::size_t>(world);
  if (count * w <= 2048)
    return rc::gen::map(rc::gen::container<PerRank<T>>(
                            w, rc::gen::container<std::vector<T>>(count, value<T>(mode, op))),
                        [](PerRank<T> r) { return PerRankData<T>{std::move(r)}; });
  return rc::gen::map(rc::gen::arbitrary<std::uint64_t>(), [=](std::uint64_t seed) {
    PerRankData<T> d;
    for (std::size_t r = 0; r < w; ++r) d.ranks.push_back(fill<T>(count, mix(seed + r), mode, op));
    return d;
  });
}

// The float inputs a backend may be given: bitwise ones only where it promises bit-identity.
inline rc::Gen<Values> values_for(const Capabilities& caps) {
  if (!caps.bitwise_floats) return rc::gen::just(Values::exact);
  return rc::gen::element(Values::exact, Values::bitwise);
}

}  // namespace gen
}  // namespace props

namespace rc {
template <>
struct Arbitrary<props::WorldShape> {
  static Gen<props::WorldShape> arbitrary() { return props::gen::world_shape(); }
};
template <>
struct Arbitrary<dist::DType> {
  static Gen<dist::DType> arbitrary() { return props::gen::dtype(); }
};
}  // namespace rc
