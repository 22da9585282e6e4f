// all_reduce and reduce on sim against the reference, bit for bit: every dtype with every op it
// allows, world sizes 1, 2, 3, 8 (and 64, 256 for a few all_reduces), every data form, every root.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/tests/conformance.hpp"

namespace {

using namespace conformance;

// Runs all_reduce on rank `rank`'s input in form `f`; the op is given as a ReduceOp (vector), an
// MMEngine name (span) or an upper-case name (tensor, checking the case-insensitive parse).
template <class T>
std::vector<T> all_reduce_in(Form f, dist::ReduceOp op, std::vector<T> v) {
  const std::string name(dist::to_string(op));
  switch (f) {
    case Form::vector: dist::all_reduce(v, op); return v;
    case Form::span: dist::all_reduce(std::span<T>(v), name); return v;
    case Form::tensor: {
      const auto shape = shape_for(v.size());
      dist::Tensor t = dist::Tensor::from(std::move(v), shape);
      dist::all_reduce(t, upper(name));
      require(t.shape() == shape, "all_reduce changed the tensor's shape");
      return values_of<T>(t);
    }
  }
  return {};
}

template <class T>
std::vector<T> reduce_in(Form f, dist::ReduceOp op, int dst, std::vector<T> v) {
  switch (f) {
    case Form::vector: dist::reduce(v, dst, op); return v;
    case Form::span: dist::reduce(std::span<T>(v), dst, std::string(dist::to_string(op))); return v;
    case Form::tensor: {
      const auto shape = shape_for(v.size());
      dist::Tensor t = dist::Tensor::from(std::move(v), shape);
      dist::reduce(t, dst, op);
      require(t.shape() == shape, "reduce changed the tensor's shape");
      return values_of<T>(t);
    }
  }
  return {};
}

std::uint64_t salt_of(dist::ReduceOp op) { return static_cast<std::uint64_t>(op); }

template <class T> class AllReduce : public conformance::Test {};
TYPED_TEST_SUITE(AllReduce, AllDTypes, DTypeName);

TYPED_TEST(AllReduce, EveryOpCountAndFormMatchesReference) {
  using T = TypeParam;
  for (int n : world_sizes) {
    // Each rank runs every case in order and returns the results in that order.
    const auto got = dist::sim::run(world(n), [n] {
      std::vector<std::vector<T>> out;
      std::size_t k = 0;
      for (auto op : ops_for<T>())
        for (std::size_t count : counts_at(n))
          for (Form f : forms_at(count, k++))
            out.push_back(all_reduce_in(f, op, input<T>(dist::get_rank(), count, salt_of(op))));
      return out;
    });
    std::size_t k = 0, c = 0;
    for (auto op : ops_for<T>()) {
      for (std::size_t count : counts_at(n)) {
        const auto expected =
            from_ref<T>(ref::all_reduce(to_ref(inputs<T>(n, count, salt_of(op))), to_ref(op)));
        for (Form f : forms_at(count, k++)) {
          for (int r = 0; r < n; ++r)
            EXPECT_TRUE(bits_equal(got[static_cast<std::size_t>(r)][c],
                                   expected[static_cast<std::size_t>(r)]))
                << "world " << n << ", op " << dist::to_string(op) << ", count " << count
                << ", form " << to_string(f) << ", rank " << r;
          ++c;
        }
      }
    }
  }
}

template <class T> class Reduce : public conformance::Test {};
TYPED_TEST_SUITE(Reduce, AllDTypes, DTypeName);

TYPED_TEST(Reduce, EveryOpRootCountAndFormMatchesReference) {
  using T = TypeParam;
  for (int n : world_sizes) {
    const auto got = dist::sim::run(world(n), [n] {
      std::vector<std::vector<T>> out;
      std::size_t k = 0;
      for (int root : roots_at(n))
        for (auto op : ops_for<T>())
          for (std::size_t count : counts_for_root(n, root))
            for (Form f : forms_at(count, k++))
              out.push_back(reduce_in(f, op, root, input<T>(dist::get_rank(), count, salt_of(op))));
      return out;
    });
    std::size_t k = 0, c = 0;
    for (int root : roots_at(n)) {
      for (auto op : ops_for<T>()) {
        for (std::size_t count : counts_for_root(n, root)) {
          const auto expected = from_ref<T>(
              ref::reduce(to_ref(inputs<T>(n, count, salt_of(op))), to_ref(op), root));
          for (Form f : forms_at(count, k++)) {
            for (int r = 0; r < n; ++r)
              EXPECT_TRUE(bits_equal(got[static_cast<std::size_t>(r)][c],
                                     expected[static_cast<std::size_t>(r)]))
                  << "world " << n << ", root " << root << ", op " << dist::to_string(op)
                  << ", count " << count << ", form " << to_string(f) << ", rank " << r;
            ++c;
          }
        }
      }
    }
  }
}

// Many ranks (more than cores): a few all_reduces at 64 and 256 ranks.
template <class T> void check_large_world(int n, dist::ReduceOp op, std::size_t count) {
  const auto got = dist::sim::run(world(n), [&] {
    auto v = input<T>(dist::get_rank(), count, salt_of(op));
    dist::all_reduce(v, op);
    return v;
  });
  const auto expected =
      from_ref<T>(ref::all_reduce(to_ref(inputs<T>(n, count, salt_of(op))), to_ref(op)));
  EXPECT_TRUE(bits_equal(got, expected)) << "world " << n << ", op " << dist::to_string(op);
}

TEST(AllReduceLargeWorld, SixtyFourRanks) {
  check_large_world<float>(64, dist::ReduceOp::sum, 3001);
  check_large_world<std::int32_t>(64, dist::ReduceOp::mean, 7);
  check_large_world<dist::float16>(64, dist::ReduceOp::max, 5);
}

TEST(AllReduceLargeWorld, TwoHundredFiftySixRanks) {
  check_large_world<std::int64_t>(256, dist::ReduceOp::sum, 5);
  check_large_world<dist::bfloat16>(256, dist::ReduceOp::mean, 3);
}

}  // namespace
