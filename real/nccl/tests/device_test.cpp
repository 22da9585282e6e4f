// The nccl backend on GPUs: a one-rank world calling the backend directly, and the device kernels
// (bitwise folds, integer mean) on one GPU against a host computation; every collective against
// the reference is in the conformance suite (conformance_nccl.cpp). Each test skips, saying why,
// when the GPUs it needs are not present.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/context.hpp"
#include "real/nccl/kernels.hpp"
#include "real/nccl/mapping.hpp"
#include "real/nccl/tests/late_fill.hpp"
#include "real/nccl/tests/nccl_test_util.hpp"

namespace {

using namespace nccl_test;
using dist::ReduceOp;

dist::core::BackendImpl& world_backend() { return *dist::core::current_context()->world->backend; }

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
    // Device buffers through the front end: the one-rank shortcut leaves device copies to nccl.
    DeviceVector<float> src(std::vector<float>{1, 2, 3}), dst(std::vector<float>{0, 0, 0});
    dist::detail::all_gather(dist::detail::buffer_of(dst.tensor()),
                             dist::detail::input_of(src.tensor()), {})
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

// A collective called right after a kernel on CUDA's default stream reads what the kernel wrote:
// the group's stream waits for the default streams (as torch's waits for the current stream).
TEST(NcclWorldOfOne, ACollectiveWaitsForWorkOnTheDefaultStream) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  run(1, [] {
    constexpr std::size_t n = 1 << 16;
    DeviceVector<std::int32_t> src(std::vector<std::int32_t>(n, 0)), dst(std::vector<std::int32_t>(n, 0));
    auto in = src.tensor(), out = dst.tensor();
    // The kernel writes 42 after 200 ms; the out-of-place all_gather (a copy on one rank) starts
    // at once on the group's stream and must not copy the zeros.
    const cudaError_t launched = fill_late_on_default_stream(
        static_cast<std::int32_t*>(in.data()), n, 42, std::chrono::milliseconds(200));
    EXPECT_EQ(launched, cudaSuccess) << cudaGetErrorString(launched);
    if (launched != cudaSuccess) return 0;
    dist::detail::all_gather(dist::detail::buffer_of(out), dist::detail::input_of(in), {}).wait();
    const auto got = dst.to_host();
    EXPECT_EQ(std::count(got.begin(), got.end(), 42), static_cast<std::ptrdiff_t>(n))
        << "the collective read the buffer before the default stream's kernel wrote it";
    return 0;
  });
}

// cuda tensors: allocated, zeroed and copied through CUDA (real/nccl/device_memory.cpp), so the
// forms that return new tensors work on device data, as MMEngine's do.
TEST(NcclWorldOfOne, TensorReturningFormsAllocateOnTheGpu) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  run(1, [] {
    const auto host = dist::Tensor::from(std::vector<float>{1, 2, 3, 4});
    const dist::Tensor gpu = host.to(dist::Device::cuda(0));
    EXPECT_EQ(gpu.device(), dist::Device::cuda(0));
    const std::vector<dist::Tensor> all = dist::all_gather(gpu);
    EXPECT_EQ(all.size(), 1u);
    EXPECT_EQ(all.at(0).device(), dist::Device::cuda(0));
    EXPECT_EQ(all.at(0).to(dist::Device::cpu()).values<float>()[3], 4.0f);
    const dist::Tensor summed = dist::reduce_scatter(gpu);
    EXPECT_EQ(summed.device(), dist::Device::cuda(0));
    EXPECT_EQ(summed.clone().to(dist::Device::cpu()).values<float>()[0], 1.0f);
    const dist::Tensor zeros = dist::Tensor::zeros({2}, dist::DType::int64, dist::Device::cuda(0));
    EXPECT_EQ(zeros.to(dist::Device::cpu()).values<std::int64_t>()[1], 0);
    return 0;
  });
}

template <class T> class NcclKernelsOnDevice : public ::testing::Test {};
using IntTypes = ::testing::Types<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t,
                                  std::int64_t, std::uint64_t>;
TYPED_TEST_SUITE(NcclKernelsOnDevice, IntTypes, DTypeName);

// integer_finish on the current GPU: `in` holds `slices` slices of `count` elements.
template <class T>
std::vector<T> finish_on_device(const std::vector<T>& in, std::size_t count, int slices,
                                dist::real::kernels::Fold fold, long long divisor, bool in_place) {
  DeviceVector<T> src(in);
  DeviceVector<T> dst{std::vector<T>(count)};
  void* out = in_place ? src.tensor().data() : dst.tensor().data();
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  EXPECT_EQ(dist::real::kernels::integer_finish(dist::real::kernel_int_type(dist::dtype_v<T>), out,
                                                src.tensor().data(), count, slices, count, fold,
                                                divisor, stream),
            cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  (void)cudaStreamDestroy(stream);
  auto result = in_place ? src.to_host() : dst.to_host();
  result.resize(count);
  return result;
}

TYPED_TEST(NcclKernelsOnDevice, FoldsSlicesAndDividesTruncatingTowardZero) {
  using T = TypeParam;
  using dist::real::kernels::Fold;
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const std::size_t count = 257;
  const int slices = 3;
  std::vector<T> in;
  for (int s = 0; s < slices; ++s) {
    const auto part = input<T>(s, count, 42);
    in.insert(in.end(), part.begin(), part.end());
  }
  for (const Fold fold : {Fold::band, Fold::bor, Fold::bxor})
    for (const long long divisor : {1LL, 3LL}) {
      std::vector<T> expected(count);
      for (std::size_t i = 0; i < count; ++i) {
        T acc = in[i];
        for (int s = 1; s < slices; ++s) {
          const T x = in[static_cast<std::size_t>(s) * count + i];
          acc = static_cast<T>(fold == Fold::band ? (acc & x) : fold == Fold::bor ? (acc | x) : (acc ^ x));
        }
        if constexpr (std::is_signed_v<T>) expected[i] = static_cast<T>(static_cast<std::int64_t>(acc) / divisor);
        else expected[i] = static_cast<T>(static_cast<std::uint64_t>(acc) / static_cast<std::uint64_t>(divisor));
      }
      EXPECT_EQ(finish_on_device(in, count, slices, fold, divisor, false), expected)
          << "fold " << static_cast<int>(fold) << ", divisor " << divisor;
    }
  // The integer mean's division alone, in place (one slice).
  const std::vector<T> one(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(count));
  std::vector<T> divided(count);
  for (std::size_t i = 0; i < count; ++i) {
    if constexpr (std::is_signed_v<T>) divided[i] = static_cast<T>(static_cast<std::int64_t>(one[i]) / 4);
    else divided[i] = static_cast<T>(static_cast<std::uint64_t>(one[i]) / 4u);
  }
  EXPECT_EQ(finish_on_device(one, count, 1, Fold::none, 4, true), divided);
}

}  // namespace
