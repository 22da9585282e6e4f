// The nccl backend on GPUs: a one-rank world calling the backend directly, and every collective
// on a world of one rank per GPU (host and device data), compared with reference/ on exact-sum
// inputs. Each test skips, saying why, when the GPUs it needs are not present.
#include <gtest/gtest.h>

#include "core/context.hpp"
#include "real/nccl/tests/nccl_test_util.hpp"

namespace {

using namespace nccl_test;
using dist::ReduceOp;

constexpr std::size_t counts[] = {0, 1, 7, 1000};

dist::core::Backend& world_backend() { return *dist::core::current_context()->world->backend; }

TEST(NcclWorldOfOne, EveryOperationRunsThroughNccl) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  const auto results = run(1, [] {
    EXPECT_EQ(dist::get_comm_device(), dist::Device::cuda(0));
    auto& backend = world_backend();
    // Device data in place; every plan (native, integer mean, bitwise fold) on one rank.
    DeviceVector<std::int32_t> d(std::vector<std::int32_t>{5, -7, 9});
    for (const auto op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::bxor, ReduceOp::max}) {
      auto t = d.tensor();
      backend.all_reduce(dist::detail::buffer_of(t), op).wait();
      EXPECT_EQ(d.to_host(), (std::vector<std::int32_t>{5, -7, 9})) << to_string(op);
    }
    // Host data, staged through the GPU and copied back.
    std::vector<double> h{1.5, -2.25};
    backend.all_reduce(dist::detail::buffer_of(std::span<double>(h)), ReduceOp::mean).wait();
    EXPECT_EQ(h, (std::vector<double>{1.5, -2.25}));
    // Device buffers through the front end: the one-rank shortcut leaves device copies to nccl
    // (dist cannot allocate device tensors itself, so the output is given).
    DeviceVector<float> src(std::vector<float>{1, 2, 3}), dst(std::vector<float>{0, 0, 0});
    dist::detail::all_gather(dist::detail::buffer_of(src.tensor()), dist::detail::buffer_of(dst.tensor()), {})
        .wait();
    EXPECT_EQ(dst.to_host(), (std::vector<float>{1, 2, 3}));
    backend.barrier().wait();
    auto child = backend.split({0});
    EXPECT_NE(child, nullptr);
    std::vector<std::int64_t> g{-9};
    if (child) child->all_reduce(dist::detail::buffer_of(std::span<std::int64_t>(g)), ReduceOp::sum).wait();
    EXPECT_EQ(g, (std::vector<std::int64_t>{-9}));
    return 0;
  });
  EXPECT_EQ(results.size(), 1u);
}

template <class T> class NcclCollectives : public ::testing::Test {};
TYPED_TEST_SUITE(NcclCollectives, AllDTypes, DTypeName);

// One world per test: rank r runs every (op, count) case of all_reduce, on host and device data.
TYPED_TEST(NcclCollectives, AllReduceEveryOpHostAndDevice) {
  using T = TypeParam;
  const int n = gpu_count();
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  for (const bool on_device : {false, true}) {
    const auto got = run(n, [&] {
      std::vector<std::vector<T>> outs;
      std::uint64_t salt = 0;
      for (const auto op : ops_for<T>())
        for (const std::size_t count : counts) {
          auto v = input<T>(dist::get_rank(), count, ++salt);
          if (on_device) {
            DeviceVector<T> d(v);
            auto t = d.tensor();
            dist::all_reduce(t, op);
            v = d.to_host();
          } else {
            dist::all_reduce(v, op);
          }
          outs.push_back(v);
        }
      return outs;
    });
    std::uint64_t salt = 0, index = 0;
    for (const auto op : ops_for<T>())
      for (const std::size_t count : counts) {
        const auto e = from_ref<T>(ref::all_reduce(to_ref(inputs<T>(n, count, ++salt)), to_ref(op)));
        std::vector<std::vector<T>> g;
        for (int r = 0; r < n; ++r) g.push_back(got[static_cast<std::size_t>(r)][index]);
        EXPECT_EQ(wrong(g, e, tolerance<T>(op)), 0u)
            << to_string(op) << ", count " << count << (on_device ? ", device" : ", host");
        ++index;
      }
  }
}

TYPED_TEST(NcclCollectives, ReduceAndReduceScatterEveryOp) {
  using T = TypeParam;
  const int n = gpu_count();
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  const std::size_t chunk = 5;
  const auto got = run(n, [&] {
    std::vector<std::vector<T>> outs;
    std::uint64_t salt = 0;
    for (const auto op : ops_for<T>()) {
      auto v = input<T>(dist::get_rank(), 7, ++salt);
      dist::reduce(v, n - 1, op);
      outs.push_back(v);
      outs.push_back(dist::reduce_scatter(input<T>(dist::get_rank(), chunk * static_cast<std::size_t>(n), ++salt), op));
    }
    return outs;
  });
  std::uint64_t salt = 0, index = 0;
  for (const auto op : ops_for<T>()) {
    const auto reduced = from_ref<T>(ref::reduce(to_ref(inputs<T>(n, 7, ++salt)), to_ref(op), n - 1));
    const auto scattered =
        from_ref<T>(ref::reduce_scatter(to_ref(inputs<T>(n, chunk * static_cast<std::size_t>(n), ++salt)), to_ref(op)));
    for (const auto* e : {&reduced, &scattered}) {
      std::vector<std::vector<T>> g;
      for (int r = 0; r < n; ++r) g.push_back(got[static_cast<std::size_t>(r)][index]);
      EXPECT_EQ(wrong(g, *e, tolerance<T>(op)), 0u) << to_string(op) << (e == &reduced ? " reduce" : " reduce_scatter");
      ++index;
    }
  }
}

TYPED_TEST(NcclCollectives, DataMovementMatchesTheReference) {
  using T = TypeParam;
  const int n = gpu_count();
  if (const auto why = skip_reason(2); !why.empty()) GTEST_SKIP() << why;
  const std::size_t count = 6;
  const auto got = run(n, [&] {
    const int me = dist::get_rank();
    std::vector<std::vector<T>> outs;
    auto b = input<T>(me, count, 1);
    dist::broadcast(b, 1);
    outs.push_back(b);
    std::vector<T> all;
    for (const auto& part : dist::all_gather(input<T>(me, count, 2))) all.insert(all.end(), part.begin(), part.end());
    outs.push_back(all);
    std::vector<T> gathered;
    for (const auto& part : dist::gather(input<T>(me, count, 3), 0)) gathered.insert(gathered.end(), part.begin(), part.end());
    outs.push_back(gathered);
    std::vector<T> mine(count);
    const auto root_input = input<T>(0, count * static_cast<std::size_t>(n), 4);
    dist::scatter(std::span<T>(mine), std::span<const T>(root_input), 0);
    outs.push_back(mine);
    outs.push_back(dist::all_to_all(input<T>(me, count * static_cast<std::size_t>(n), 5)));
    return outs;
  });
  const std::vector<std::vector<std::vector<T>>> expected = {
      from_ref<T>(ref::broadcast(to_ref(inputs<T>(n, count, 1)), 1)),
      from_ref<T>(ref::all_gather(to_ref(inputs<T>(n, count, 2)))),
      from_ref<T>(ref::gather(to_ref(inputs<T>(n, count, 3)), 0)),
      from_ref<T>(ref::scatter(to_ref(std::vector<std::vector<T>>{input<T>(0, count * static_cast<std::size_t>(n), 4)})[0], n, 0)),
      from_ref<T>(ref::all_to_all(to_ref(inputs<T>(n, count * static_cast<std::size_t>(n), 5)))),
  };
  const char* names[] = {"broadcast", "all_gather", "gather", "scatter", "all_to_all"};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    std::vector<std::vector<T>> g;
    for (int r = 0; r < n; ++r) g.push_back(got[static_cast<std::size_t>(r)][k]);
    EXPECT_EQ(wrong(g, expected[k], 0), 0u) << names[k];
  }
}

}  // namespace
