// reduce_scatter on sim against the reference, bit for bit: every dtype with every op it allows,
// world sizes 1, 2, 3, 8, chunk sizes 0, 1, 7 and a large one, in every data form.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/tests/conformance.hpp"

namespace {

using namespace conformance;

template <class T>
std::vector<T> reduce_scatter_in(Form f, dist::ReduceOp op, int n, std::vector<T> in) {
  const std::size_t chunk = in.size() / static_cast<std::size_t>(n);
  switch (f) {
    case Form::vector: return dist::reduce_scatter(in, op);
    case Form::span: {
      std::vector<T> out(chunk);
      dist::reduce_scatter(std::span<T>(out), std::span<const T>(in),
                           std::string(dist::to_string(op)));
      return out;
    }
    case Form::tensor: {
      // A 2-D {world, chunk} input gives a {1, chunk} result; a large 1-D one a 1-D result.
      const bool flat = chunk >= 1000;
      const std::vector<std::int64_t> shape =
          flat ? std::vector<std::int64_t>{static_cast<std::int64_t>(in.size())}
               : std::vector<std::int64_t>{n, static_cast<std::int64_t>(chunk)};
      const std::vector<std::int64_t> expected_shape =
          flat ? std::vector<std::int64_t>{static_cast<std::int64_t>(chunk)}
               : std::vector<std::int64_t>{1, static_cast<std::int64_t>(chunk)};
      const dist::Tensor t = dist::Tensor::from(std::move(in), shape);
      const dist::Tensor out = dist::reduce_scatter(t, op);
      require(out.shape() == expected_shape, "reduce_scatter: wrong result shape");
      require(out.dtype() == dist::dtype_v<T>, "reduce_scatter: wrong result dtype");
      return values_of<T>(out);
    }
  }
  return {};
}

template <class T> class ReduceScatter : public conformance::Test {};
TYPED_TEST_SUITE(ReduceScatter, AllDTypes, DTypeName);

TYPED_TEST(ReduceScatter, EveryOpCountAndFormMatchesReference) {
  using T = TypeParam;
  for (int n : world_sizes) {
    const auto w = static_cast<std::size_t>(n);
    const auto got = dist::sim::run(world(n), [n, w] {
      std::vector<std::vector<T>> out;
      std::size_t k = 0;
      for (auto op : ops_for<T>())
        for (std::size_t chunk : chunks_at(n))
          for (Form f : forms_at(chunk, k++))
            out.push_back(reduce_scatter_in(
                f, op, n, input<T>(dist::get_rank(), w * chunk, static_cast<std::uint64_t>(op))));
      return out;
    });
    std::size_t k = 0, c = 0;
    for (auto op : ops_for<T>()) {
      for (std::size_t chunk : chunks_at(n)) {
        const auto in = inputs<T>(n, w * chunk, static_cast<std::uint64_t>(op));
        const auto expected = from_ref<T>(ref::reduce_scatter(to_ref(in), to_ref(op)));
        for (Form f : forms_at(chunk, k++)) {
          for (std::size_t r = 0; r < w; ++r)
            EXPECT_TRUE(bits_equal(got[r][c], expected[r]))
                << "world " << n << ", op " << dist::to_string(op) << ", chunk " << chunk
                << ", form " << to_string(f) << ", rank " << r;
          ++c;
        }
      }
    }
  }
}

}  // namespace
