// Hand-computed results every backend must give: MMEngine's documented examples (semantics doc
// §1.3), integer wrapping and truncating mean, and a one-rank world as the identity.
#include <limits>

#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

using I64 = std::vector<std::int64_t>;
class Examples : public conformance::Test {};

// all_reduce over a world of in.size() ranks, rank r contributing in[r]; every rank's result.
template <class T> RankResults<std::vector<T>> all_reduce_of(const PerRank<T>& in, dist::OpArg op) {
  return run_world(static_cast<int>(in.size()), [&] {
    auto v = in[static_cast<std::size_t>(dist::get_rank())];
    dist::all_reduce(v, op);
    return v;
  });
}
template <class T> void expect_all(const RankResults<std::vector<T>>& got, const std::vector<T>& e,
                                   const std::string& what) {
  for (const auto& [rank, v] : got) EXPECT_EQ(v, e) << what << ", rank " << rank;
}

TEST_F(Examples, Int64OpTableAtWorldTwo) {
  if (auto why = lacks_world(2)) GTEST_SKIP() << *why;
  const std::pair<const char*, I64> table[] = {{"sum", {11, 13}}, {"product", {30, 30}},
                                               {"min", {5, 3}},   {"max", {6, 10}},
                                               {"band", {4, 2}},  {"bor", {7, 11}},
                                               {"bxor", {3, 9}}};
  for (const auto& [op, expected] : table) expect_all(all_reduce_of<std::int64_t>({{6, 3}, {5, 10}}, op), expected, op);
}

TEST_F(Examples, IntegerMeanTruncatesTowardZero) {
  if (auto why = lacks_world(2)) GTEST_SKIP() << *why;
  expect_all(all_reduce_of<std::int64_t>({{1, 2}, {2, 2}}, "mean"), I64{1, 2}, "{1,2},{2,2}");
  expect_all(all_reduce_of<std::int64_t>({{-1}, {-2}}, "mean"), I64{-1}, "-1,-2");
  // Exact, unlike MMEngine's float32 path (which gives 16777216 here).
  expect_all(all_reduce_of<std::int64_t>({{16777217}, {16777217}}, "mean"), I64{16777217}, "2^24+1");
  expect_all(all_reduce_of<std::int8_t>({{100}, {100}}, "mean"), std::vector<std::int8_t>{-28},
             "int8 wraps, then divides");
}

TEST_F(Examples, IntegerMeanTruncatesTowardZeroAtWorldThree) {
  if (auto why = lacks_world(3)) GTEST_SKIP() << *why;
  expect_all(all_reduce_of<std::int64_t>({{1}, {2}, {3}}, "mean"), I64{2}, "1,2,3");
  expect_all(all_reduce_of<std::int64_t>({{1, 2}, {1, 2}, {2, 2}}, "mean"), I64{1, 2}, "3 ranks");
  // -4 / 3 truncates to -1 (floor would give -2); the op name parses case-insensitively.
  expect_all(all_reduce_of<std::int32_t>({{-1}, {-1}, {-2}}, "MEAN"), std::vector<std::int32_t>{-1}, "-4/3");
}

TEST_F(Examples, IntegerSumAndProductWrap) {
  if (auto why = lacks_world(2)) GTEST_SKIP() << *why;
  using U8 = std::vector<std::uint8_t>;
  expect_all(all_reduce_of<std::uint8_t>({{1, 2, 3}, {200, 200, 200}}, "sum"), U8{201, 202, 203}, "uint8");
  expect_all(all_reduce_of<std::uint8_t>({{100, 200, 255}, {200, 100, 1}}, "sum"), U8{44, 44, 0}, "uint8 wraps");
  expect_all(all_reduce_of<std::int8_t>({{127, -128}, {1, -1}}, dist::ReduceOp::sum),
             std::vector<std::int8_t>{-128, 127}, "int8 wraps");
  expect_all(all_reduce_of<std::int32_t>({{65536}, {65536}}, dist::ReduceOp::product),
             std::vector<std::int32_t>{0}, "int32 product wraps");
  constexpr auto max64 = std::numeric_limits<std::uint64_t>::max();
  expect_all(all_reduce_of<std::uint64_t>({{max64}, {2}}, dist::ReduceOp::sum), std::vector<std::uint64_t>{1},
             "uint64 wraps");
}

TEST_F(Examples, BroadcastFromRankOneAndGatherToRankOne) {
  if (auto why = lacks_world(2)) GTEST_SKIP() << *why;
  const auto got = run_world(2, [] {
    I64 v = dist::get_rank() == 0 ? I64{7, 8} : I64{8, 9};
    dist::broadcast(v, 1);
    const I64 mine{dist::get_rank() * 10};
    const auto parts = dist::gather(mine, 1);
    const auto tensors = dist::gather(dist::Tensor::from(mine), 1);
    require(parts.size() == tensors.size(), "vector and tensor gathers disagree on the size");
    return std::pair{v, parts};
  });
  for (const auto& [rank, vp] : got) {
    EXPECT_EQ(vp.first, (I64{8, 9})) << "rank " << rank;
    const std::vector<I64> parts = rank == 1 ? std::vector<I64>{{0}, {10}} : std::vector<I64>{};
    EXPECT_EQ(vp.second, parts) << "rank " << rank;
  }
}

// A one-rank world leaves data untouched (bit for bit, even NaN payloads), and the gathering
// collectives return the rank's own data.
template <class T> class OneRank : public conformance::Test {};
TYPED_TEST_SUITE(OneRank, AllDTypes, DTypeName);

TYPED_TEST(OneRank, IsTheIdentity) {
  using T = TypeParam;
  if (auto why = lacks_world(1)) GTEST_SKIP() << *why;
  const auto in = input<T>(0, 40);
  const auto got = run_world(1, [&] {
    PerRank<T> out;
    for (auto op : ops_for<T>()) {
      auto v = in;
      dist::all_reduce(v, op);
      out.push_back(v);
      dist::reduce(std::span<T>(v), 0, op);
      out.push_back(v);
      out.push_back(dist::reduce_scatter(in, op));
    }
    auto v = in;
    dist::all_reduce(v, "avg");  // not validated on one rank, as in MMEngine
    out.push_back(v);
    dist::broadcast(v, 0);
    out.push_back(v);
    const auto gathered = dist::all_gather(in);
    require(gathered.size() == 1, "all_gather on one rank must return one part");
    out.push_back(gathered[0]);
    const auto tensors = dist::all_gather(dist::Tensor::from(in));
    require(tensors.size() == 1, "all_gather(Tensor) on one rank must return one part");
    out.push_back(values_of<T>(tensors[0]));
    const auto g = dist::gather(in, 0);
    require(g.size() == 1, "gather on one rank must return one part");
    out.push_back(g[0]);
    std::vector<T> s(in.size());
    dist::scatter(s, PerRank<T>{in}, 0);
    out.push_back(s);
    out.push_back(dist::all_to_all(in));
    return out;
  });
  for (const auto& [rank, outs] : got)
    for (std::size_t c = 0; c < outs.size(); ++c) EXPECT_EQ(bits_of(outs[c]), bits_of(in)) << "case " << c;
}

}  // namespace
}  // namespace conformance
