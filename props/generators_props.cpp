// Properties of the generators themselves (no backend): they reach every edge case the suite
// relies on, draw only legal ops, and "exact" float inputs reduce to the same bits in any order,
// which is what lets real backends be compared exactly with the reference.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "props/collective.hpp"
#include "props/generators.hpp"
#include "props/property.hpp"

namespace props {
namespace {

// What the draws reached, by name.
std::set<std::string>& seen() {
  static std::set<std::string> s;
  return s;
}

// Within a suite whose backend runs at most k ranks here, worlds have at most k ranks (so no case
// is discarded for its size), and the explicit lower bound of a property still holds.
TEST(Generators, WorldsFitTheRunningBackend) {
  std::set<int> sizes;
  current_max_ranks() = 3;
  check(200, [&] {
    const int n = (*rc::gen::arbitrary<WorldShape>()).size();
    RC_ASSERT(n >= 1 && n <= 3);
    sizes.insert(n);
    RC_ASSERT((*gen::world_shape(2, 8)).size() <= 3);
  });
  current_max_ranks() = 1;
  check(50, [] {
    RC_ASSERT((*rc::gen::arbitrary<WorldShape>()).size() == 1);
    RC_ASSERT((*gen::world_shape(2, 8)).size() == 2);  // a property needing 2 skips beforehand
  });
  current_max_ranks() = unbounded_ranks;
  EXPECT_EQ(sizes, (std::set<int>{1, 2, 3}));
}

TEST(Generators, ReachEveryEdgeCase) {
  seen().clear();
  check(1000, [] {
    const auto shape = *rc::gen::arbitrary<WorldShape>();
    const int n = shape.size();
    const auto dtype = *rc::gen::arbitrary<dist::DType>();
    const auto count = *gen::count();
    const auto members = *gen::subgroup(n);
    const auto op = *gen::op_for(dtype);
    RC_ASSERT(dist::op_allowed(op, dtype));
    RC_ASSERT(std::set<int>(members.begin(), members.end()).size() == members.size());
    RC_ASSERT(std::all_of(members.begin(), members.end(), [n](int m) { return m >= 0 && m < n; }));
    auto& s = seen();
    s.insert("dtype " + std::string(dist::to_string(dtype)));
    s.insert("op " + std::string(dist::to_string(op)) +
             (dist::is_floating(dtype) ? " float" : " int"));
    s.insert("world " + std::to_string(n));
    if (shape.nodes > 1 && shape.ranks_per_node > 1) s.insert("multi-node, multi-rank nodes");
    if (count == 0) s.insert("count 0");
    if (count % static_cast<std::size_t>(n) != 0) s.insert("count not divisible");
    if (count > 32768) s.insert("count beyond a 32 KiB block of int8");
    if (static_cast<int>(members.size()) < n) s.insert("proper subgroup");
    if (members.size() > 1 && !std::is_sorted(members.begin(), members.end()))
      s.insert("unsorted subgroup");
  });
  std::vector<std::string> want = {
      "count 0",         "count not divisible", "count beyond a 32 KiB block of int8",
      "proper subgroup", "unsorted subgroup",   "multi-node, multi-rank nodes"};
  for (int w = 1; w <= 8; ++w) want.push_back("world " + std::to_string(w));
  for (dist::DType d : dist::all_dtypes) want.push_back("dtype " + std::string(dist::to_string(d)));
  for (const char* op : {"sum", "mean", "product", "min", "max"}) {
    want.push_back(std::string("op ") + op + " float");
    want.push_back(std::string("op ") + op + " int");
  }
  for (const char* op : {"band", "bor", "bxor"}) want.push_back(std::string("op ") + op + " int");
  for (const auto& w : want) EXPECT_TRUE(seen().count(w)) << "never drawn: " << w;
}

// The reduction as a pairwise tree (as ring/tree algorithms associate it), then the mean's
// division.
template <class R>
R tree_fold(std::vector<R> v, ref::Op op) {
  const int world = static_cast<int>(v.size());
  while (v.size() > 1) {
    std::vector<R> next;
    for (std::size_t i = 0; i + 1 < v.size(); i += 2)
      next.push_back(ref::combine(op, v[i], v[i + 1]));
    if (v.size() % 2) next.push_back(v.back());
    v = std::move(next);
  }
  return op == ref::Op::mean ? ref::finish_mean(v[0], world) : v[0];
}

// Exact float inputs: the rank-order fold, the fold over a permutation of the ranks and a
// pairwise tree over that permutation all give the same bits.
TEST(Generators, ExactFloatInputsReduceTheSameInAnyOrder) {
  check(300, [] {
    const auto dtype = *rc::gen::element(dist::DType::float16, dist::DType::bfloat16,
                                         dist::DType::float32, dist::DType::float64);
    const auto op = *gen::op_for(dtype);
    const int n = *gen::uniform(1, 9);
    const auto perm = *gen::permutation(n);
    with_dtype(dtype, [&]<class T>(std::type_identity<T>) {
      const auto in = *gen::inputs<T>(n, 1, Values::exact, op);
      std::vector<ref_t<T>> column, permuted;
      for (int r = 0; r < n; ++r) {
        column.push_back(to_ref(in.ranks[static_cast<std::size_t>(r)][0]));
        permuted.push_back(
            to_ref(in.ranks[static_cast<std::size_t>(perm[static_cast<std::size_t>(r)])][0]));
      }
      const T a = from_ref<T>(ref::fold(std::span<const ref_t<T>>(column), to_ref(op)));
      const T b = from_ref<T>(ref::fold(std::span<const ref_t<T>>(permuted), to_ref(op)));
      const T c = from_ref<T>(tree_fold(permuted, to_ref(op)));
      RC_ASSERT(same_bits(a, b));
      RC_ASSERT(same_bits(a, c));
      RC_ASSERT(!is_nan(a));
    });
  });
}

}  // namespace
}  // namespace props
