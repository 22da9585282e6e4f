// GoogleTest glue of the reference bridge: the dtype lists typed tests run over, their names
// ("int8", ..., "float64"), and bit-exact comparison as an assertion.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "testing/reference_bridge.hpp"

namespace test_support {

using AllDTypes = ::testing::Types<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t,
                                   std::int64_t, std::uint64_t, dist::float16, dist::bfloat16,
                                   float, double>;
using IntDTypes = ::testing::Types<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t,
                                   std::int64_t, std::uint64_t>;

// Typed-test names: the dtype's name.
struct DTypeName {
  template <class T> static std::string GetName(int) {
    return std::string(dist::to_string(dist::dtype_v<T>));
  }
};

// Bit for bit (any NaN equals any NaN), reporting the wrong elements nccl-tests style.
template <class V> ::testing::AssertionResult bits_equal(const V& actual, const V& expected) {
  if (const auto m = differences(actual, expected))
    return ::testing::AssertionFailure() << *m;
  return ::testing::AssertionSuccess();
}

}  // namespace test_support
