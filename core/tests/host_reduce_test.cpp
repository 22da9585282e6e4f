// The host reduction kernels (sim's folds, gloo's reduce functions, mpi's MPI_Ops), checked value
// by value against reference::combine and reference::finish_mean on edge inputs (wrapping, NaN,
// signed zeros, infinities, rounding).
#include "core/host_reduce.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "testing/reference_bridge.hpp"
#include "testing/typed_tests.hpp"

namespace {

using namespace test_support;

template <class T>
std::vector<T> edge_values() {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_integral_v<T>) {
    return {T(0),
            T(1),
            T(2),
            T(3),
            L::max(),
            L::min(),
            static_cast<T>(L::max() - 1),
            static_cast<T>(L::min() + 1),
            static_cast<T>(0x55),
            static_cast<T>(-1)};
  } else {
    std::vector<T> out;
    for (float f : {0.0f, -0.0f, 1.0f, -1.0f, 1.5f, 3.0f, 1e-3f, 65504.0f, 1e30f,
                    std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN(), 0.1f, 2049.0f, 257.0f})
      out.push_back(T(f));
    return out;
  }
}

template <class T>
class ReduceFnTest : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceFnTest, AllDTypes, DTypeName);

TYPED_TEST(ReduceFnTest, EveryStepEqualsTheReference) {
  using T = TypeParam;
  const auto values = edge_values<T>();
  for (const auto op : ops_for<T>()) {
    const auto fn = dist::core::reduce_step(dist::dtype_v<T>, op);
    std::vector<T> a, b;
    for (const T& x : values)
      for (const T& y : values) {
        a.push_back(x);
        b.push_back(y);
      }
    std::vector<T> out(a.size());
    fn(out.data(), a.data(), b.data(), a.size());
    std::vector<T> in_place = a;  // gloo also calls it with out == a
    fn(in_place.data(), in_place.data(), b.data(), a.size());
    int wrong = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const T expected = from_ref<T>(ref::combine(to_ref(op), to_ref(a[i]), to_ref(b[i])));
      wrong += bits_of(out[i]) != bits_of(expected) || bits_of(in_place[i]) != bits_of(expected);
    }
    EXPECT_EQ(wrong, 0) << "op " << dist::to_string(op);
  }
}

TYPED_TEST(ReduceFnTest, MeanDivisionEqualsTheReference) {
  using T = TypeParam;
  for (const int world : {1, 2, 3, 4, 7}) {
    auto values = edge_values<T>();
    auto got = values;
    dist::core::finish_mean(got.data(), got.size(), dist::dtype_v<T>, world);
    int wrong = 0;
    for (std::size_t i = 0; i < values.size(); ++i)
      wrong += bits_of(got[i]) != bits_of(from_ref<T>(ref::finish_mean(to_ref(values[i]), world)));
    EXPECT_EQ(wrong, 0) << "world " << world;
  }
}

}  // namespace
