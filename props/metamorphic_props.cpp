// Metamorphic laws, checked on the backend against itself: all_reduce = reduce + broadcast;
// all_reduce = reduce_scatter + all_gather; gather on dst = all_gather; a world of one rank is
// the identity (and the same as not being distributed); relabelling ranks keeps a commutative
// reduction.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <string>
#include <utility>
#include <vector>

#include "dist/dist.hpp"
#include "props/backends.hpp"
#include "props/collective.hpp"
#include "props/generators.hpp"
#include "props/property.hpp"

namespace props {
namespace {

// The common draw of the laws: a world, a dtype, an op and inputs of `count` elements.
struct Draw {
  WorldShape shape;
  dist::DType dtype;
  dist::ReduceOp op;
  Values mode;
};

template <BackendUnderTest B>
Draw draw() {
  Draw d{*rc::gen::arbitrary<WorldShape>(), *rc::gen::arbitrary<dist::DType>(), dist::ReduceOp::sum,
         *gen::values_for(B::capabilities)};
  d.op = *gen::op_for(d.dtype);
  RC_CLASSIFY(d.shape.size() == 1, "world of 1");
  return d;
}

template <BackendUnderTest B>
void reduce_then_broadcast() {
  const Draw d = draw<B>();
  const int root = *gen::root(d.shape.size());
  const std::size_t count = *gen::count();
  with_dtype(d.dtype, [&]<class T>(std::type_identity<T>) {
    const auto in = *gen::inputs<T>(d.shape.size(), count, d.mode, d.op);
    const auto got = run_on<B>(d.shape, [&] {
      auto a = in.ranks[static_cast<std::size_t>(dist::get_rank())];
      auto b = a;
      dist::all_reduce(a, d.op);
      dist::reduce(b, root, d.op);
      dist::broadcast(b, root);
      return std::pair(a, b);
    });
    for (const auto& [a, b] : got) {
      require_same(b, a, "reduce + broadcast vs all_reduce");
      require_same(a, got.front().first, "all_reduce on different ranks");
    }
  });
}

template <BackendUnderTest B>
void reduce_scatter_then_all_gather() {
  const Draw d = draw<B>();
  const int n = d.shape.size();
  const std::size_t chunk = *gen::count();
  with_dtype(d.dtype, [&]<class T>(std::type_identity<T>) {
    const auto in = *gen::inputs<T>(n, chunk * static_cast<std::size_t>(n), d.mode, d.op);
    const auto got = run_on<B>(d.shape, [&] {
      auto a = in.ranks[static_cast<std::size_t>(dist::get_rank())];
      const auto part = dist::reduce_scatter(a, d.op);
      std::vector<T> b;
      for (const auto& p : dist::all_gather(part)) b.insert(b.end(), p.begin(), p.end());
      dist::all_reduce(a, d.op);
      return std::pair(a, b);
    });
    for (const auto& [a, b] : got) require_same(b, a, "reduce_scatter + all_gather vs all_reduce");
  });
}

template <BackendUnderTest B>
void gather_is_all_gather_on_dst() {
  const Draw d = draw<B>();
  const int dst = *gen::root(d.shape.size());
  const std::size_t count = *gen::count();
  with_dtype(d.dtype, [&]<class T>(std::type_identity<T>) {
    const auto in = *gen::inputs<T>(d.shape.size(), count, d.mode, d.op);
    const auto got = run_on<B>(d.shape, [&] {
      const auto& mine = in.ranks[static_cast<std::size_t>(dist::get_rank())];
      return std::pair(dist::gather(mine, dst), dist::all_gather(mine));
    });
    for (int r = 0; r < d.shape.size(); ++r) {
      const auto& [gathered, all] = got[static_cast<std::size_t>(r)];
      require_same(gathered, r == dst ? all : PerRank<T>{},
                   "gather vs all_gather on rank " + std::to_string(r), "part");
    }
  });
}

// Any collective in a one-rank world returns its input, as it does when not distributed.
template <BackendUnderTest B>
void world_of_one_is_identity() {
  const auto dtype = *rc::gen::arbitrary<dist::DType>();
  const Call call = *gen::any_call(dtype, 1);
  const Values mode = *gen::values_for(B::capabilities);
  RC_TAG(std::string(to_string(call.kind)));
  with_dtype(dtype, [&]<class T>(std::type_identity<T>) {
    const auto in = *gen::inputs<T>(1, input_count(call, 1), mode, call.op);
    const auto got = run_on<B>({1, 1}, [&] { return execute<T>(call, in.ranks[0]); });
    const auto alone = execute<T>(call, in.ranks[0]);  // this thread: not distributed
    require_same(got[0], in.ranks[0], "one-rank world vs identity");
    require_same(alone, in.ranks[0], "not distributed vs identity");
  });
}

// Whether the reduction of `op` over `mode` inputs is the same in any rank order.
bool commutes(dist::DType dtype, dist::ReduceOp op, Values mode) {
  if (!dist::is_floating(dtype)) return true;
  if (op == dist::ReduceOp::min || op == dist::ReduceOp::max) return true;  // NaN wins; -0 < +0
  return mode == Values::exact;
}

template <BackendUnderTest B>
void relabelling_keeps_reduction() {
  const Draw d = draw<B>();
  RC_PRE(commutes(d.dtype, d.op, d.mode));
  const auto perm = *gen::permutation(d.shape.size());
  const std::size_t count = *gen::count();
  RC_TAG(std::string(dist::to_string(d.op)));
  with_dtype(d.dtype, [&]<class T>(std::type_identity<T>) {
    const auto in = *gen::inputs<T>(d.shape.size(), count, d.mode, d.op);
    const auto got = run_on<B>(d.shape, [&] {
      const auto r = static_cast<std::size_t>(dist::get_rank());
      auto a = in.ranks[r];
      auto b = in.ranks[static_cast<std::size_t>(perm[r])];
      dist::all_reduce(a, d.op);
      dist::all_reduce(b, d.op);
      return std::pair(a, b);
    });
    for (const auto& [a, b] : got) require_same(b, a, "all_reduce of relabelled inputs");
  });
}

template <class B>
class Laws : public BackendSuite<B> {};
TYPED_TEST_SUITE(Laws, AllBackends, BackendNames);

TYPED_TEST(Laws, AllReduceIsReduceThenBroadcast) {
  check(150, [] { reduce_then_broadcast<TypeParam>(); });
}
TYPED_TEST(Laws, AllReduceIsReduceScatterThenAllGather) {
  check(150, [] { reduce_scatter_then_all_gather<TypeParam>(); });
}
TYPED_TEST(Laws, GatherOnDstIsAllGather) {
  check(150, [] { gather_is_all_gather_on_dst<TypeParam>(); });
}
TYPED_TEST(Laws, WorldOfOneIsIdentity) {
  check(200, [] { world_of_one_is_identity<TypeParam>(); });
}
TYPED_TEST(Laws, RelabellingRanksKeepsCommutativeReductions) {
  check(200, [] { relabelling_keeps_reduction<TypeParam>(); });
}

}  // namespace
}  // namespace props
