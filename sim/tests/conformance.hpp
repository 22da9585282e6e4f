// Shared helpers of the sim conformance tests: dtype lists for typed tests, the dist <-> reference
// type and op mappings, edge-case inputs per dtype, and bit-exact comparison (NaN equals NaN).
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim.hpp"
#include "reference/collectives.hpp"

namespace conformance {

namespace ref = dist::reference;

using AllDTypes = ::testing::Types<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t,
                                   std::int64_t, std::uint64_t, dist::float16, dist::bfloat16,
                                   float, double>;

// Typed-test names: the dtype's name ("int8", ..., "float64").
struct DTypeName {
  template <class T> static std::string GetName(int) {
    return std::string(dist::to_string(dist::dtype_v<T>));
  }
};

inline dist::sim::Cluster cluster(int nodes, int ranks_per_node) {
  dist::sim::Cluster c;
  c.nodes = nodes;
  c.ranks_per_node = ranks_per_node;
  return c;
}
inline dist::sim::Cluster world(int n) { return cluster(1, n); }

// The world sizes and per-rank counts every collective is checked at.
inline constexpr int world_sizes[] = {1, 2, 3, 8};
inline constexpr std::size_t counts[] = {0, 1, 7, 100003};

// The roots of rooted collectives checked at world size n: every root at 3.
inline std::vector<int> roots_at(int n) {
  if (n == 3) return {2, 0, 1};
  if (n == 8) return {5, 0};
  return {n - 1};
}
// The counts checked at world size n: the large one at 3 and 8 ranks only (to keep the suite fast).
inline std::vector<std::size_t> counts_at(int n) {
  if (n == 3 || n == 8) return {std::begin(counts), std::end(counts)};
  return {0, 1, 7};
}
// The counts checked at `root`: the large count at the first root of roots_at(n) only.
inline std::vector<std::size_t> counts_for_root(int n, int root) {
  if (root == roots_at(n).front()) return counts_at(n);
  return {0, 1, 7};
}
// Chunk sizes (elements per rank's chunk) of reduce_scatter and all_to_all at world size n.
inline std::vector<std::size_t> chunks_at(int n) {
  if (n == 3 || n == 8) return {0, 1, 7, 12501};
  return {0, 1, 7};
}

template <class T> inline constexpr bool is_half_v =
    std::is_same_v<T, dist::float16> || std::is_same_v<T, dist::bfloat16>;
template <class T> inline constexpr bool is_float_v = is_half_v<T> || std::is_floating_point_v<T>;

// The reference's element type for a dist element type (the 16-bit floats map by bits).
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
  for (const T& x : v) out.push_back(to_ref(x));
  return out;
}
template <class T> std::vector<T> from_ref(const std::vector<ref_t<T>>& v) {
  std::vector<T> out;
  for (const auto& x : v) out.push_back(from_ref<T>(x));
  return out;
}
template <class T> ref::PerRank<ref_t<T>> to_ref(const std::vector<std::vector<T>>& in) {
  ref::PerRank<ref_t<T>> out;
  for (const auto& v : in) out.push_back(to_ref(v));
  return out;
}
template <class T> std::vector<std::vector<T>> from_ref(const ref::PerRank<ref_t<T>>& in) {
  std::vector<std::vector<T>> out;
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

// The ops defined for T (every op for integers; no bitwise op for floats).
template <class T> std::vector<dist::ReduceOp> ops_for() {
  std::vector<dist::ReduceOp> out;
  for (auto op : {dist::ReduceOp::sum, dist::ReduceOp::mean, dist::ReduceOp::product,
                  dist::ReduceOp::min, dist::ReduceOp::max, dist::ReduceOp::band,
                  dist::ReduceOp::bor, dist::ReduceOp::bxor})
    if (dist::op_allowed(op, dist::dtype_v<T>)) out.push_back(op);
  return out;
}

// The storage bits of a value, widened to 64 bits.
template <class T> std::uint64_t bits_of(T v) {
  if constexpr (is_half_v<T>) return v.bits;
  else {
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
  }
}
template <class T> T from_bits(std::uint64_t b) {
  if constexpr (is_half_v<T>) return T::from_bits(static_cast<std::uint16_t>(b));
  else {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
  }
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

template <class T> std::string show(T v) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(bits_of(v)));
  std::string text;
  if constexpr (is_half_v<T>) text = std::to_string(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<T>) text = std::to_string(v);
  else text = std::to_string(static_cast<long long>(v));
  return text + " (" + hex + ")";
}

// nccl-tests style: counts the wrong elements and shows the first few.
template <class T>
::testing::AssertionResult bits_equal(const std::vector<T>& actual,
                                      const std::vector<T>& expected) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << "size " << actual.size() << ", expected "
                                         << expected.size();
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (same_bits(actual[i], expected[i])) continue;
    if (wrong++ < 4)
      first += "\n  [" + std::to_string(i) + "] got " + show(actual[i]) + ", expected " +
               show(expected[i]);
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << wrong << " of " << actual.size()
                                       << " elements wrong:" << first;
}

template <class T>
::testing::AssertionResult bits_equal(const std::vector<std::vector<T>>& actual,
                                      const std::vector<std::vector<T>>& expected) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << actual.size() << " ranks/parts, expected "
                                         << expected.size();
  for (std::size_t r = 0; r < actual.size(); ++r)
    if (auto res = bits_equal(actual[r], expected[r]); !res)
      return ::testing::AssertionFailure() << "[" << r << "]: " << res.message();
  return ::testing::AssertionSuccess();
}

// Edge values per type: wrap-around and sign extremes for integers; ±0, NaNs, infinities,
// extremes, subnormals and values whose sum depends on the order for floats.
template <class T> std::vector<T> specials() {
  if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    return {T(0), T(1), static_cast<T>(-1), T(2), static_cast<T>(-2), L::max(), L::min(),
            static_cast<T>(L::max() - 1), static_cast<T>(L::min() + 1), T(3), T(7), T(100)};
  } else if constexpr (std::is_same_v<T, dist::float16>) {
    std::vector<T> out;
    for (std::uint16_t b : std::initializer_list<std::uint16_t>{
             0x0000, 0x8000, 0x7E00, 0xFE01, 0x7C00, 0xFC00, 0x3C00, 0xBC00, 0x7BFF, 0x0001,
             0x6800, 0x1400})
      out.push_back(T::from_bits(b));
    return out;
  } else if constexpr (std::is_same_v<T, dist::bfloat16>) {
    std::vector<T> out;
    for (std::uint16_t b : std::initializer_list<std::uint16_t>{
             0x0000, 0x8000, 0x7FC0, 0xFFC1, 0x7F80, 0xFF80, 0x3F80, 0xBF80, 0x7F7F, 0x0001,
             0x4380, 0x3380})
      out.push_back(T::from_bits(b));
    return out;
  } else {
    using L = std::numeric_limits<T>;
    return {T(0), -T(0), L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(),
            T(1), T(-1), L::max(), L::denorm_min(), T(1e8), L::epsilon() / 2};
  }
}

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A finite value of moderate magnitude in [2^-4, 2^5) (random sign, mantissa and exponent), built
// from its float bits.
template <class T> T moderate(std::uint64_t h) {
  const auto exponent = static_cast<std::uint32_t>(123 + (h >> 23) % 9);
  const auto f = std::bit_cast<float>(static_cast<std::uint32_t>(
      ((h >> 40) & 1) << 31 | exponent << 23 | (h & 0x7FFFFF)));
  if constexpr (is_half_v<T>) return T(f);
  else if constexpr (std::is_same_v<T, double>)
    return static_cast<double>(f) + static_cast<double>(h >> 44) * 1e-12;
  else return f;
}

// Rank `rank`'s input of `count` elements for case `salt`. The first elements run through every
// combination of specials on ranks 0..2 (element i holds digit `rank` of i in base #specials);
// later ones mix random bit patterns with moderate values.
template <class T> std::vector<T> make_input(int rank, std::size_t count, std::uint64_t salt) {
  const auto sp = specials<T>();
  const std::size_t s = sp.size();
  const std::size_t combos = s * s * s;
  std::vector<T> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t h = mix(salt * 0x100000001B3ull + static_cast<std::uint64_t>(rank) * 7919u + i);
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

// Large inputs are generated once per test (the sim ranks and the reference ask for the same ones).
struct InputCache {
  std::mutex mutex;
  std::map<std::tuple<int, int, std::size_t, std::uint64_t>, std::shared_ptr<const void>> entries;
};
inline InputCache& input_cache() {
  static InputCache cache;
  return cache;
}

template <class T> std::vector<T> input(int rank, std::size_t count, std::uint64_t salt = 0) {
  if (count < 1000) return make_input<T>(rank, count, salt);
  InputCache& cache = input_cache();
  const auto key = std::tuple{static_cast<int>(dist::dtype_v<T>), rank, count, salt};
  std::shared_ptr<const void> entry;
  {
    std::lock_guard lock(cache.mutex);
    if (auto it = cache.entries.find(key); it != cache.entries.end()) entry = it->second;
  }
  if (!entry) {
    auto made = std::make_shared<const std::vector<T>>(make_input<T>(rank, count, salt));
    std::lock_guard lock(cache.mutex);
    entry = cache.entries.emplace(key, std::move(made)).first->second;
  }
  return *static_cast<const std::vector<T>*>(entry.get());
}

// The base of the typed tests: drops the cached inputs after each test.
class Test : public ::testing::Test {
 protected:
  void TearDown() override {
    std::lock_guard lock(input_cache().mutex);
    input_cache().entries.clear();
  }
};

template <class T> std::vector<std::vector<T>> inputs(int n, std::size_t count,
                                                      std::uint64_t salt = 0) {
  std::vector<std::vector<T>> out;
  for (int r = 0; r < n; ++r) out.push_back(input<T>(r, count, salt));
  return out;
}

template <class T> std::vector<T> values_of(const dist::Tensor& t) {
  auto v = t.values<T>();
  return {v.begin(), v.end()};
}

// Flattens a list of parts (all_gather, gather results).
template <class T> std::vector<T> concat(const std::vector<std::vector<T>>& parts) {
  std::vector<T> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Inside a rank: fails the rank (and so the run) with `what` unless `ok`.
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

inline std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// A Tensor shape holding `count` elements: 2-D for some counts, so shapes are checked.
inline std::vector<std::int64_t> shape_for(std::size_t count) {
  const auto c = static_cast<std::int64_t>(count);
  if (count == 0) return {2, 0};
  if (count == 7) return {7, 1};
  return {c};
}

// The three data forms every collective accepts.
enum class Form { vector, span, tensor };
inline constexpr Form forms[] = {Form::vector, Form::span, Form::tensor};
inline const char* to_string(Form f) {
  return f == Form::vector ? "vector" : f == Form::span ? "span" : "tensor";
}
// The forms checked at `count`: all three for small counts, one (rotating with `k`) for large.
inline std::vector<Form> forms_at(std::size_t count, std::size_t k) {
  if (count < 1000) return {Form::vector, Form::span, Form::tensor};
  return {forms[k % 3]};
}

// The RunError a run that must fail throws (nothing if it did not fail that way).
template <class F> std::optional<dist::sim::RunError> run_error(const dist::sim::Cluster& c, F&& f) {
  try {
    dist::sim::run(c, std::forward<F>(f));
  } catch (const dist::sim::RunError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace conformance
