// The reduction steps behind reduce_step, one loop per (type, op) so they vectorise (this file
// is compiled at -O3, see core/CMakeLists.txt), and the mean's final division.
#include "core/host_reduce.hpp"

#include <cmath>

namespace dist::core {

namespace {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <class F>
bool min_is_first(F x, F y) {
  if (std::isnan(x)) return true;
  if (std::isnan(y)) return false;
  if (x == y) return std::signbit(x) || !std::signbit(y);
  return x < y;
}

template <class F>
bool max_is_first(F x, F y) {
  if (std::isnan(x)) return true;
  if (std::isnan(y)) return false;
  if (x == y) return !std::signbit(x) || std::signbit(y);
  return y < x;
}

template <class T>
T wrap(ReduceOp op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  using Wide = std::common_type_t<U, unsigned int>;
  const auto x = static_cast<Wide>(static_cast<U>(a));
  const auto y = static_cast<Wide>(static_cast<U>(b));
  return static_cast<T>(static_cast<U>(op == ReduceOp::product ? x * y : x + y));
}

template <class T>
T integer_step(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
    case ReduceOp::product: return wrap(op, a, b);
    case ReduceOp::min: return b < a ? b : a;
    case ReduceOp::max: return a < b ? b : a;
    case ReduceOp::band: return static_cast<T>(a & b);
    case ReduceOp::bor: return static_cast<T>(a | b);
    case ReduceOp::bxor: return static_cast<T>(a ^ b);
  }
  return a;
}

template <class T>
T floating_step(ReduceOp op, T a, T b) {
  using C = std::conditional_t<is_half_v<T>, float, T>;
  const auto x = static_cast<C>(a);
  const auto y = static_cast<C>(b);
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean: return T(x + y);
    case ReduceOp::product: return T(x * y);
    case ReduceOp::min: return min_is_first(x, y) ? a : b;
    case ReduceOp::max: return max_is_first(x, y) ? a : b;
    case ReduceOp::band:
    case ReduceOp::bor:
    case ReduceOp::bxor: break;  // rejected by validation before any data moves
  }
  return a;
}

template <class T, ReduceOp Op>
void loop(void* out, const void* a, const void* b, std::size_t n) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) o[i] = integer_step(Op, x[i], y[i]);
    else o[i] = floating_step(Op, x[i], y[i]);
  }
}

template <class T>
ReduceStep typed_step(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean: return loop<T, ReduceOp::sum>;
    case ReduceOp::product: return loop<T, ReduceOp::product>;
    case ReduceOp::min: return loop<T, ReduceOp::min>;
    case ReduceOp::max: return loop<T, ReduceOp::max>;
    case ReduceOp::band: return loop<T, ReduceOp::band>;
    case ReduceOp::bor: return loop<T, ReduceOp::bor>;
    case ReduceOp::bxor: return loop<T, ReduceOp::bxor>;
  }
  throw InvalidArgument("unknown reduce op " + std::to_string(static_cast<int>(op)));
}

}  // namespace

ReduceStep reduce_step(DType dtype, ReduceOp op) {
  return with_element_type(dtype,
                           [&]<class T>(std::type_identity<T>) { return typed_step<T>(op); });
}

void finish_mean(void* data, std::size_t count, DType dtype, int world) {
  with_element_type(dtype, [&]<class T>(std::type_identity<T>) {
    auto* p = static_cast<T*>(data);
    if constexpr (std::is_integral_v<T>) {
      using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
      for (std::size_t i = 0; i < count; ++i)
        p[i] = static_cast<T>(static_cast<Wide>(p[i]) / static_cast<Wide>(world));
    } else if constexpr (is_half_v<T>) {
      for (std::size_t i = 0; i < count; ++i)
        p[i] = T(static_cast<float>(p[i]) / static_cast<float>(world));
    } else {
      for (std::size_t i = 0; i < count; ++i) p[i] = p[i] / static_cast<T>(world);
    }
  });
}

void premultiply(void* out, const void* in, std::size_t count, DType dtype, double factor) {
  with_element_type(dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (!std::is_integral_v<T>) {
      auto* o = static_cast<T*>(out);
      const auto* p = static_cast<const T*>(in);
      using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const auto f = static_cast<Compute>(factor);
      for (std::size_t i = 0; i < count; ++i) o[i] = T(static_cast<Compute>(p[i]) * f);
    }
  });
}

}  // namespace dist::core
