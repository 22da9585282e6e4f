// Element types in the property suite: dtype dispatch, printing values, and rapidcheck's
// failure on a difference; the dist <-> reference bridge itself is testing/reference_bridge.hpp.
#pragma once

#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dist/types.hpp"
#include "reference/collectives.hpp"
#include "testing/reference_bridge.hpp"

namespace props {

using namespace test_support;
// A declaration, not only the directive: props::differences(...) must find these beside props'
// own overloads (qualified lookup skips a directive's names where the namespace declares some).
using test_support::differences;

// Calls f(std::type_identity<T>{}) with T the element type of `dtype`.
template <class F>
decltype(auto) with_dtype(dist::DType dtype, F&& f) {
  using dist::DType;
  switch (dtype) {
    case DType::int8:
      return f(std::type_identity<std::int8_t>{});
    case DType::uint8:
      return f(std::type_identity<std::uint8_t>{});
    case DType::int32:
      return f(std::type_identity<std::int32_t>{});
    case DType::uint32:
      return f(std::type_identity<std::uint32_t>{});
    case DType::int64:
      return f(std::type_identity<std::int64_t>{});
    case DType::uint64:
      return f(std::type_identity<std::uint64_t>{});
    case DType::float16:
      return f(std::type_identity<dist::float16>{});
    case DType::bfloat16:
      return f(std::type_identity<dist::bfloat16>{});
    case DType::float32:
      return f(std::type_identity<float>{});
    case DType::float64:
      break;
  }
  return f(std::type_identity<double>{});
}

template <class T>
void show_values(const std::vector<T>& v, std::ostream& os, std::size_t limit = 24) {
  os << "[";
  for (std::size_t i = 0; i < v.size() && i < limit; ++i) os << (i ? ", " : "") << show_value(v[i]);
  if (v.size() > limit) os << ", ... (" << v.size() << " elements)";
  os << "]";
}

// Fails the current rapidcheck case, naming `what`, unless actual equals expected bit for bit.
template <class V, class... Label>
void require_same(const V& actual, const V& expected, std::string_view what, Label... label) {
  if (const auto m = differences(actual, expected, label...))
    RC_FAIL(std::string(what) + ": " + *m);
}

}  // namespace props

namespace dist {
// rapidcheck prints generated values through showValue (found by argument-dependent lookup).
inline void showValue(DType dtype, std::ostream& os) { os << to_string(dtype); }
inline void showValue(ReduceOp op, std::ostream& os) { os << to_string(op); }
}  // namespace dist
