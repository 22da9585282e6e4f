// Every tensor collective against the reference on random worlds, dtypes, ops, counts, roots and
// call forms (vector, span, Tensor, async + wait), on the world and on random subgroups.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <string>
#include <vector>

#include "props/backends.hpp"
#include "props/collective.hpp"
#include "props/generators.hpp"
#include "props/property.hpp"

namespace props {
namespace {

void classify(const Call& c, int world, std::size_t total) {
  RC_CLASSIFY(world == 1, "world of 1");
  RC_CLASSIFY(c.count == 0, "count 0");
  RC_CLASSIFY(total % static_cast<std::size_t>(world) != 0, "count not divisible by size");
  RC_CLASSIFY(c.count > 2048, "large");
  RC_TAG(std::string(dist::to_string(c.dtype)));
}

// `kind` on the whole world: every rank's output equals the reference's.
template <BackendUnderTest B>
void world_collective(Kind kind) {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const int n = shape.size();
  const auto dtype = *rc::gen::arbitrary<dist::DType>();
  const Call call = *gen::call(kind, dtype, n);
  const Values mode = *gen::values_for(B::capabilities);
  with_dtype(dtype, [&]<class T>(std::type_identity<T>) {
    const auto in = *gen::inputs<T>(n, input_count(call, n), mode, call.op);
    classify(call, n, input_count(call, n));
    const auto got = run_on<B>(shape, [&] {
      return execute<T>(call, in.ranks[static_cast<std::size_t>(dist::get_rank())]);
    });
    require_same(got, expected<T>(call, in.ranks), "outputs");
  });
}

// Any collective on a random subgroup (random members in random order, group-local root); the
// other ranks only take part in new_group. Members also answer get_rank/get_world_size for it.
template <BackendUnderTest B>
void subgroup_collective() {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const auto members = *gen::subgroup(shape.size());
  const int k = static_cast<int>(members.size());
  const auto dtype = *rc::gen::arbitrary<dist::DType>();
  const Call call = *gen::any_call(dtype, k);
  const Values mode = *gen::values_for(B::capabilities);
  RC_CLASSIFY(k < shape.size(), "proper subgroup");
  RC_TAG(std::string(to_string(call.kind)));
  with_dtype(dtype, [&]<class T>(std::type_identity<T>) {
    const auto in = *gen::inputs<T>(k, input_count(call, k), mode, call.op);
    const auto got = run_on<B>(shape, [&] {
      const dist::Group g = dist::new_group(members);
      const int me = dist::get_rank(g);
      if (!g.is_member()) return std::pair(std::vector<int>{me}, std::vector<T>{});
      const std::vector<int> answers{me, dist::get_world_size(g)};
      return std::pair(answers, execute<T>(call, in.ranks[static_cast<std::size_t>(me)], g));
    });
    const auto want = expected<T>(call, in.ranks);
    for (int r = 0; r < shape.size(); ++r) {
      const auto it = std::find(members.begin(), members.end(), r);
      const auto& [answers, output] = got[static_cast<std::size_t>(r)];
      if (it == members.end()) {
        RC_ASSERT(answers == std::vector<int>{-1});
        continue;
      }
      const int gr = static_cast<int>(it - members.begin());
      RC_ASSERT(answers == (std::vector<int>{gr, k}));
      require_same(output, want[static_cast<std::size_t>(gr)],
                   "rank " + std::to_string(r) + "'s output");
    }
  });
}

template <class B>
class Collectives : public BackendSuite<B> {};
TYPED_TEST_SUITE(Collectives, AllBackends, BackendNames);

TYPED_TEST(Collectives, AllReduce) {
  check(200, [] { world_collective<TypeParam>(Kind::all_reduce); });
}
TYPED_TEST(Collectives, Reduce) {
  check(150, [] { world_collective<TypeParam>(Kind::reduce); });
}
TYPED_TEST(Collectives, Broadcast) {
  check(150, [] { world_collective<TypeParam>(Kind::broadcast); });
}
TYPED_TEST(Collectives, AllGather) {
  check(150, [] { world_collective<TypeParam>(Kind::all_gather); });
}
TYPED_TEST(Collectives, Gather) {
  check(150, [] { world_collective<TypeParam>(Kind::gather); });
}
TYPED_TEST(Collectives, Scatter) {
  check(150, [] { world_collective<TypeParam>(Kind::scatter); });
}
TYPED_TEST(Collectives, ReduceScatter) {
  check(150, [] { world_collective<TypeParam>(Kind::reduce_scatter); });
}
TYPED_TEST(Collectives, AllToAll) {
  check(150, [] { world_collective<TypeParam>(Kind::all_to_all); });
}
TYPED_TEST(Collectives, Barrier) {
  check(50, [] { world_collective<TypeParam>(Kind::barrier); });
}
TYPED_TEST(Collectives, OnRandomSubgroups) {
  check(200, [] { subgroup_collective<TypeParam>(); });
}

}  // namespace
}  // namespace props
