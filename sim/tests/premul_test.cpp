// premul_sum on sim: all_reduce, reduce and reduce_scatter with each rank's input multiplied by a
// factor, bit for bit against reference::premultiplied followed by the sum collective, for every
// floating dtype and any bits (NaN, infinities, -0); the errors it raises.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using namespace sim_test;
using ::testing::HasSubstr;

constexpr double factor = 0.37;
constexpr int n = 3;
constexpr std::size_t count = 12;  // divisible by n for reduce_scatter

template <class T>
class PremulSum : public ::testing::Test {};
using FloatingTypes = ::testing::Types<dist::float16, dist::bfloat16, float, double>;
TYPED_TEST_SUITE(PremulSum, FloatingTypes);

template <class T>
PerRank<T> inputs_of() {
  PerRank<T> in;
  for (int r = 0; r < n; ++r) in.push_back(any_bits_input<T>(r, count, 5));
  return in;
}

template <class T>
PerRank<T> run_ranks(const std::function<std::vector<T>(std::vector<T>)>& body) {
  const auto in = inputs_of<T>();
  PerRank<T> out(n);
  dist::sim::run(world(n), [&] {
    const auto r = static_cast<std::size_t>(dist::get_rank());
    out[r] = body(in[r]);
  });
  return out;
}

TYPED_TEST(PremulSum, AllReduceSumsTheScaledInputs) {
  using T = TypeParam;
  const auto got = run_ranks<T>([](std::vector<T> v) {
    dist::all_reduce(v, dist::premul_sum(factor));
    return v;
  });
  const auto want = from_ref<T>(
      ref::all_reduce(ref::premultiplied(to_ref(inputs_of<T>()), factor), ref::Op::sum));
  for (int r = 0; r < n; ++r)
    EXPECT_TRUE(bits_equal(got[static_cast<std::size_t>(r)], want[static_cast<std::size_t>(r)]))
        << "rank " << r;
}

TYPED_TEST(PremulSum, ReduceLeavesTheOtherRanksInputsAlone) {
  using T = TypeParam;
  const auto got = run_ranks<T>([](std::vector<T> v) {
    dist::reduce_async(std::span<T>(v), 1, dist::premul_sum(factor)).wait();
    return v;
  });
  const auto in = inputs_of<T>();
  const auto want =
      from_ref<T>(ref::reduce(ref::premultiplied(to_ref(in), factor), ref::Op::sum, 1));
  EXPECT_TRUE(bits_equal(got[1], want[1]));
  EXPECT_TRUE(bits_equal(got[0], in[0]));
  EXPECT_TRUE(bits_equal(got[2], in[2]));
}

TYPED_TEST(PremulSum, ReduceScatterSumsTheScaledInputs) {
  using T = TypeParam;
  const auto got = run_ranks<T>(
      [](std::vector<T> v) { return dist::reduce_scatter(v, dist::premul_sum(factor)); });
  const auto want = from_ref<T>(
      ref::reduce_scatter(ref::premultiplied(to_ref(inputs_of<T>()), factor), ref::Op::sum));
  for (int r = 0; r < n; ++r)
    EXPECT_TRUE(bits_equal(got[static_cast<std::size_t>(r)], want[static_cast<std::size_t>(r)]))
        << "rank " << r;
}

TEST(PremulSumAlone, OneRankGetsItsScaledInput) {
  dist::sim::run(world(1), [] {
    std::vector<double> v{2.0, -4.0};
    dist::all_reduce(v, dist::premul_sum(0.5));
    EXPECT_EQ(v, (std::vector<double>{1.0, -2.0}));
  });
}

TEST(PremulSumAlone, IntegersAreRejected) {
  const auto e = failure_of(world(2), [] {
    std::vector<int> v(3, 1);
    dist::all_reduce(v, dist::premul_sum(2.0));
  });
  ASSERT_TRUE(e.failed_with<dist::InvalidArgument>(0)) << e.what();
  EXPECT_THAT(e.outcomes()[0].message,
              HasSubstr("all_reduce: premul_sum is defined for floating dtypes only, got int32"));
  dist::sim::run(world(2), [] {
    std::vector<std::int64_t> in(4), out(2);
    EXPECT_THROW(dist::reduce_scatter(std::span<std::int64_t>(out),
                                      std::span<const std::int64_t>(in), dist::premul_sum(2.0)),
                 dist::InvalidArgument);
    std::vector<std::uint8_t> r(2);
    EXPECT_THROW(dist::reduce(r, 0, dist::premul_sum(2.0)), dist::InvalidArgument);
  });
}

}  // namespace
