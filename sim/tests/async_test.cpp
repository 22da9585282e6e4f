// The *_async collectives on sim: each equals its blocking form, Work::is_completed() holds after
// wait(), and a rank may post several operations and wait for them in any order.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "sim/tests/sim_test_util.hpp"

namespace {

using namespace sim_test;

constexpr std::size_t count = 7;

// Posts every async collective at once, waits for them in reverse order on rank 0 and in posting
// order elsewhere, and returns their results followed by the blocking forms' results.
template <class T> std::vector<std::vector<T>> async_then_blocking() {
  const int rank = dist::get_rank();
  const auto n = static_cast<std::size_t>(dist::get_world_size());
  const auto mine = input<T>(rank, count);
  const auto wide = input<T>(rank, n * count, 3);  // n chunks, for the scattering collectives
  const std::vector<T> none;

  auto ar = mine, bc = mine, rd = mine, bc_t_values = mine;
  std::vector<T> ag(n * count), ga(rank == 1 ? n * count : 0), sc(count), rs(count), aa(n * count);
  dist::Tensor bc_t = dist::Tensor::view(std::span<T>(bc_t_values), {1, count});
  dist::Tensor ar_t = dist::Tensor::from(mine, {count});

  std::vector<dist::Work> works;
  works.push_back(dist::all_reduce_async(std::span<T>(ar), dist::ReduceOp::max));
  works.push_back(dist::broadcast_async(std::span<T>(bc), 2));
  works.push_back(dist::barrier_async());
  works.push_back(dist::reduce_async(std::span<T>(rd), 1, "sum"));
  works.push_back(dist::all_gather_async(std::span<T>(ag), std::span<const T>(mine)));
  works.push_back(dist::gather_async(std::span<T>(ga), std::span<const T>(mine), 1));
  works.push_back(dist::scatter_async(std::span<T>(sc),
                                      std::span<const T>(rank == 0 ? wide : none), 0));
  works.push_back(dist::reduce_scatter_async(std::span<T>(rs), std::span<const T>(wide),
                                             dist::ReduceOp::sum));
  works.push_back(dist::all_to_all_async(std::span<T>(aa), std::span<const T>(wide)));
  works.push_back(dist::broadcast_async(bc_t, 1));
  works.push_back(dist::all_reduce_async(ar_t, dist::ReduceOp::mean));

  if (rank == 0) {
    for (auto it = works.rbegin(); it != works.rend(); ++it) it->wait();
  } else {
    for (auto& w : works) w.wait();
  }
  for (auto& w : works) require(w.is_completed(), "a Work is not completed after wait()");

  std::vector<std::vector<T>> out{ar, bc, rd, ag, ga, sc, rs, aa, bc_t_values,
                                  values_of<T>(ar_t)};

  // The blocking forms, in the same order.
  auto b_ar = mine, b_bc = mine, b_rd = mine, b_bc_t = mine, b_ar_t = mine;
  dist::all_reduce(b_ar, dist::ReduceOp::max);
  dist::broadcast(b_bc, 2);
  dist::barrier();
  dist::reduce(b_rd, 1, "sum");
  out.push_back(b_ar);
  out.push_back(b_bc);
  out.push_back(b_rd);
  out.push_back(concat(dist::all_gather(mine)));
  out.push_back(concat(dist::gather(mine, 1)));
  std::vector<T> b_sc(count);
  dist::scatter(std::span<T>(b_sc), std::span<const T>(rank == 0 ? wide : none), 0);
  out.push_back(b_sc);
  out.push_back(dist::reduce_scatter(wide, dist::ReduceOp::sum));
  out.push_back(dist::all_to_all(wide));
  dist::broadcast(b_bc_t, 1);
  out.push_back(b_bc_t);
  dist::all_reduce(b_ar_t, dist::ReduceOp::mean);
  out.push_back(b_ar_t);
  return out;
}

template <class T> void check_async_equals_blocking(int n) {
  const auto got = dist::sim::run(world(n), [] { return async_then_blocking<T>(); });
  for (std::size_t r = 0; r < got.size(); ++r) {
    const std::size_t half = got[r].size() / 2;
    for (std::size_t c = 0; c < half; ++c)
      EXPECT_TRUE(bits_equal(got[r][c], got[r][half + c])) << "rank " << r << ", case " << c;
  }
  // And the blocking results are the reference's (spot checks: all_reduce max and reduce sum).
  const auto max = ref::all_reduce(to_ref(inputs<T>(n, count)), ref::Op::max);
  const auto sum = ref::reduce(to_ref(inputs<T>(n, count)), ref::Op::sum, 1);
  for (std::size_t r = 0; r < got.size(); ++r) {
    EXPECT_TRUE(bits_equal(got[r][0], from_ref<T>(max[r]))) << "rank " << r;
    EXPECT_TRUE(bits_equal(got[r][2], from_ref<T>(sum[r]))) << "rank " << r;
  }
}

TEST(Async, EqualsBlockingFloat32) { check_async_equals_blocking<float>(3); }
TEST(Async, EqualsBlockingInt64) { check_async_equals_blocking<std::int64_t>(3); }
TEST(Async, EqualsBlockingFloat16EightRanks) { check_async_equals_blocking<dist::float16>(8); }

TEST(Async, ManyOutstandingWaitedInDifferentOrders) {
  constexpr int ops = 16;
  const auto got = dist::sim::run(world(4), [] {
    const int rank = dist::get_rank();
    std::vector<std::vector<double>> data;
    for (int k = 0; k < ops; ++k) data.push_back(input<double>(rank, 5, static_cast<std::uint64_t>(k)));
    std::vector<dist::Work> works;
    for (auto& d : data) works.push_back(dist::all_reduce_async(std::span<double>(d)));
    // Each rank waits in its own order: rank r starts at op (r * 5) % ops and wraps around.
    for (int k = 0; k < ops; ++k) works[static_cast<std::size_t>((rank * 5 + k) % ops)].wait();
    for (const auto& w : works) require(w.is_completed(), "not completed after wait()");
    return data;
  });
  for (int k = 0; k < ops; ++k) {
    const auto expected =
        ref::all_reduce(inputs<double>(4, 5, static_cast<std::uint64_t>(k)), ref::Op::sum);
    for (std::size_t r = 0; r < got.size(); ++r)
      EXPECT_TRUE(bits_equal(got[r][static_cast<std::size_t>(k)], expected[r]))
          << "op " << k << ", rank " << r;
  }
}

TEST(Async, CompletedWorkAndOneRankWork) {
  dist::Work none;
  EXPECT_TRUE(none.is_completed());
  none.wait();
  const auto got = dist::sim::run(world(1), [] {
    std::vector<int> v{1, 2};
    auto w = dist::all_reduce_async(std::span<int>(v));
    w.wait();
    return w.is_completed() && v == std::vector<int>{1, 2};
  });
  EXPECT_TRUE(got[0]);
}

}  // namespace
