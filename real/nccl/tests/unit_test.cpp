// The parts of the nccl backend that need no GPU: dtype and op mapping (including the pairs NCCL
// lacks), error translation of CUDA and NCCL codes, the device kernels' argument checks, and the
// staging rule seen through the front end's validation (a fake backend on cuda:0).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/work_state.hpp"
#include "dist/dist.hpp"
#include "real/nccl/errors.hpp"
#include "real/nccl/kernels.hpp"
#include "real/nccl/mapping.hpp"

namespace {

using dist::DType;
using dist::ReduceOp;
using dist::real::NcclPlan;
namespace kernels = dist::real::kernels;

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(NcclMapping, EveryDTypeHasItsNcclType) {
  EXPECT_EQ(dist::real::nccl_dtype(DType::int8), ncclInt8);
  EXPECT_EQ(dist::real::nccl_dtype(DType::uint8), ncclUint8);
  EXPECT_EQ(dist::real::nccl_dtype(DType::int32), ncclInt32);
  EXPECT_EQ(dist::real::nccl_dtype(DType::uint32), ncclUint32);
  EXPECT_EQ(dist::real::nccl_dtype(DType::int64), ncclInt64);
  EXPECT_EQ(dist::real::nccl_dtype(DType::uint64), ncclUint64);
  EXPECT_EQ(dist::real::nccl_dtype(DType::float16), ncclFloat16);
  EXPECT_EQ(dist::real::nccl_dtype(DType::bfloat16), ncclBfloat16);
  EXPECT_EQ(dist::real::nccl_dtype(DType::float32), ncclFloat32);
  EXPECT_EQ(dist::real::nccl_dtype(DType::float64), ncclFloat64);
  EXPECT_THROW(dist::real::nccl_dtype(static_cast<DType>(99)), dist::InvalidArgument);
}

TEST(NcclMapping, NativeOpsMapOneToOne) {
  for (const DType d : dist::all_dtypes) {
    SCOPED_TRACE(std::string(dist::to_string(d)));
    const auto check = [&](ReduceOp op, ncclRedOp_t expected) {
      const auto r = dist::real::nccl_reduction(op, d);
      EXPECT_EQ(r.plan, NcclPlan::native);
      EXPECT_EQ(r.op, expected);
    };
    check(ReduceOp::sum, ncclSum);
    check(ReduceOp::product, ncclProd);
    check(ReduceOp::min, ncclMin);
    check(ReduceOp::max, ncclMax);
  }
}

TEST(NcclMapping, MeanIsNcclAvgForFloatsAndAnExactDivisionForIntegers) {
  for (const DType d : dist::all_dtypes) {
    const auto r = dist::real::nccl_reduction(ReduceOp::mean, d);
    if (dist::is_floating(d)) {
      EXPECT_EQ(r.plan, NcclPlan::native) << dist::to_string(d);
      EXPECT_EQ(r.op, ncclAvg) << dist::to_string(d);
    } else {
      EXPECT_EQ(r.plan, NcclPlan::sum_then_divide) << dist::to_string(d);
      EXPECT_EQ(r.op, ncclSum) << dist::to_string(d);
      EXPECT_NO_THROW(dist::real::kernel_int_type(d));
    }
  }
}

TEST(NcclMapping, BitwiseOpsFoldGatheredSlicesOnIntegersOnly) {
  const std::pair<ReduceOp, kernels::Fold> ops[] = {{ReduceOp::band, kernels::Fold::band},
                                                    {ReduceOp::bor, kernels::Fold::bor},
                                                    {ReduceOp::bxor, kernels::Fold::bxor}};
  for (const auto& [op, fold] : ops)
    for (const DType d : dist::all_dtypes) {
      if (dist::is_floating(d)) {
        try {
          dist::real::nccl_reduction(op, d);
          ADD_FAILURE() << to_string(op) << " on " << to_string(d) << " was accepted";
        } catch (const dist::InvalidArgument& e) {
          EXPECT_TRUE(contains(e.what(), std::string(to_string(op)))) << e.what();
          EXPECT_TRUE(contains(e.what(), std::string(to_string(d)))) << e.what();
        }
        continue;
      }
      const auto r = dist::real::nccl_reduction(op, d);
      EXPECT_EQ(r.plan, NcclPlan::gather_then_fold);
      EXPECT_EQ(r.fold, fold);
    }
  EXPECT_EQ(dist::real::describe(dist::real::nccl_reduction(ReduceOp::bxor, DType::int32)),
            "all_gather, then a device bxor fold");
  EXPECT_EQ(dist::real::describe(dist::real::nccl_reduction(ReduceOp::mean, DType::float32)), "ncclAvg");
}

TEST(NcclMapping, KernelIntTypesCoverTheIntegersAndRefuseFloats) {
  EXPECT_EQ(dist::real::kernel_int_type(DType::int8), kernels::IntType::int8);
  EXPECT_EQ(dist::real::kernel_int_type(DType::uint64), kernels::IntType::uint64);
  EXPECT_THROW(dist::real::kernel_int_type(DType::float32), dist::InvalidArgument);
  EXPECT_THROW(dist::real::kernel_int_type(DType::bfloat16), dist::InvalidArgument);
}

TEST(NcclMapping, BuffersOnTheCommunicatorsGpuOrTheHostAreReached) {
  const auto gpu0 = dist::Device::cuda(0);
  EXPECT_TRUE(dist::real::nccl_reaches(gpu0, dist::Device::cpu()));
  EXPECT_TRUE(dist::real::nccl_reaches(gpu0, dist::Device::cuda(0)));
  EXPECT_FALSE(dist::real::nccl_reaches(gpu0, dist::Device::cuda(1)));
  EXPECT_FALSE(dist::real::nccl_reaches(dist::Device::cuda(1), dist::Device::cuda(0)));
}

TEST(NcclErrors, CudaCodesBecomeBackendErrorsWithTheVendorCode) {
  try {
    dist::real::throw_cuda_error(cudaErrorInsufficientDriver, "all_reduce #3 on the group");
    ADD_FAILURE() << "no error";
  } catch (const dist::BackendError& e) {
    EXPECT_EQ(e.vendor_code(), static_cast<int>(cudaErrorInsufficientDriver));
    EXPECT_EQ(e.code(), dist::ErrorCode::backend);
    EXPECT_TRUE(contains(e.what(), "nccl all_reduce #3 on the group")) << e.what();
    EXPECT_TRUE(contains(e.what(), "cudaErrorInsufficientDriver")) << e.what();
  }
  EXPECT_NO_THROW(dist::real::check_cuda(cudaSuccess, "nothing"));
  EXPECT_THROW(dist::real::check_cuda(cudaErrorMemoryAllocation, "alloc"), dist::BackendError);
  EXPECT_TRUE(contains(dist::real::cuda_error_text(cudaErrorInvalidValue), "cudaErrorInvalidValue ("));
}

TEST(NcclErrors, ALazyTextIsMadeOnlyWhenACudaCallFailed) {
  int made = 0;
  const auto where = [&made] {
    ++made;
    return std::string("barrier #7 on the group of world ranks [0, 1] on cuda:0");
  };
  dist::real::check_cuda(cudaSuccess, where);
  EXPECT_EQ(made, 0) << "the text of a success was built";
  try {
    dist::real::check_cuda(cudaErrorLaunchFailure, where);
    ADD_FAILURE() << "no error";
  } catch (const dist::BackendError& e) {
    EXPECT_EQ(made, 1);
    EXPECT_TRUE(contains(e.what(), "nccl barrier #7 on the group of world ranks [0, 1]"))
        << e.what();
    EXPECT_EQ(e.vendor_code(), static_cast<int>(cudaErrorLaunchFailure));
  }
}

TEST(NcclErrors, NcclCodesBecomeBackendErrorsAndRemoteErrorsRankFailures) {
  const ncclResult_t backend_codes[] = {ncclUnhandledCudaError, ncclSystemError, ncclInternalError,
                                        ncclInvalidArgument, ncclInvalidUsage};
  for (const ncclResult_t code : backend_codes) {
    try {
      dist::real::throw_nccl_error(code, "broadcast #7 on the group", "last error text");
      ADD_FAILURE() << "no error for " << code;
    } catch (const dist::BackendError& e) {
      EXPECT_EQ(e.vendor_code(), static_cast<int>(code));
      EXPECT_TRUE(contains(e.what(), "nccl broadcast #7 on the group failed: ")) << e.what();
      EXPECT_TRUE(contains(e.what(), dist::real::nccl_error_text(code))) << e.what();
      EXPECT_TRUE(contains(e.what(), "last error text")) << e.what();
    }
  }
  try {
    dist::real::throw_nccl_error(ncclRemoteError, "all_gather #2 on the group");
    ADD_FAILURE() << "no error";
  } catch (const dist::RankFailure& e) {
    EXPECT_EQ(e.failed_rank(), -1);
    EXPECT_TRUE(contains(e.what(), "all_gather #2")) << e.what();
    EXPECT_TRUE(contains(e.what(), "ncclRemoteError")) << e.what();
  }
  // With a roll call's result: the first member that did not answer is the failed rank.
  try {
    dist::real::throw_nccl_error(ncclRemoteError, "all_gather #3 on the group", "", {2, 3});
    ADD_FAILURE() << "no error";
  } catch (const dist::RankFailure& e) {
    EXPECT_EQ(e.failed_rank(), 2);
    EXPECT_TRUE(contains(e.what(), "ranks 2, 3 (absent from the roll call)")) << e.what();
  }
  EXPECT_EQ(dist::real::nccl_error_text(ncclInvalidUsage).rfind("ncclInvalidUsage (", 0), 0u);
  EXPECT_EQ(dist::real::nccl_error_text(ncclNumResults).rfind("ncclUnknownError", 0), 0u);
}

TEST(NcclErrors, TimeoutsNameTheOperationAndTheDeadline) {
  try {
    dist::real::throw_nccl_timeout("reduce_scatter #9 on the group of world ranks [0, 1]",
                                   std::chrono::milliseconds(1500));
    ADD_FAILURE() << "no error";
  } catch (const dist::TimeoutError& e) {
    EXPECT_TRUE(contains(e.what(), "reduce_scatter #9")) << e.what();
    EXPECT_TRUE(contains(e.what(), "1500 ms")) << e.what();
    EXPECT_TRUE(contains(e.what(), "aborted")) << e.what();
    EXPECT_TRUE(e.missing_ranks().empty());
  }
  try {
    dist::real::throw_nccl_timeout("send to rank 1 on the group of world ranks [0, 1, 2]",
                                   std::chrono::milliseconds(900), 1);
    ADD_FAILURE() << "no error";
  } catch (const dist::TimeoutError& e) {
    EXPECT_EQ(e.missing_ranks(), std::vector<int>{1});
    EXPECT_TRUE(contains(e.what(), "900 ms: rank 1 did not take part; the communicator"))
        << e.what();
  }
}

TEST(NcclKernels, RefuseBadArgumentsBeforeTouchingTheDevice) {
  int x = 0;
  EXPECT_EQ(kernels::integer_finish(kernels::IntType::int32, &x, &x, 0, 1, 0, kernels::Fold::none, 2, nullptr),
            cudaSuccess);  // nothing to do
  EXPECT_EQ(kernels::integer_finish(kernels::IntType::int32, &x, &x, 1, 0, 0, kernels::Fold::band, 1, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kernels::integer_finish(kernels::IntType::int32, &x, &x, 1, 1, 0, kernels::Fold::none, 0, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kernels::integer_finish(kernels::IntType::int32, &x, &x, 1, 2, 1, kernels::Fold::none, 1, nullptr),
            cudaErrorInvalidValue);
}

TEST(NcclKernels, WithoutAGpuAValidCallReportsTheCudaErrorInsteadOfCrashing) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0)
    GTEST_SKIP() << "a GPU is present: the kernels are checked by the device tests";
  std::int32_t x[2] = {4, -4};  // host memory: the call must fail before touching it
  const cudaError_t e = kernels::integer_finish(kernels::IntType::int32, x, x, 2, 1, 0,
                                                kernels::Fold::none, 2, nullptr);
  EXPECT_NE(e, cudaSuccess) << dist::real::cuda_error_text(e);
  EXPECT_EQ(x[0], 4);
  EXPECT_EQ(x[1], -4);
}

// A build with nccl registers CUDA's memory for cuda tensors; without a GPU, allocating one is a
// BackendError carrying CUDA's reason (not the "no CUDA" InvalidArgument of a build without it).
TEST(NcclTensors, CudaTensorsUseCudaMemoryAndSayWhyWithoutAGpu) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0)
    GTEST_SKIP() << "a GPU is present: cuda tensors are checked by the device tests";
  try {
    (void)dist::Tensor::zeros({4}, DType::float32, dist::Device::cuda(0));
    ADD_FAILURE() << "allocated a cuda tensor without a GPU";
  } catch (const dist::BackendError& e) {
    EXPECT_TRUE(contains(e.what(), "cuda:0")) << e.what();
    EXPECT_TRUE(contains(e.what(), "cudaError")) << e.what();
  }
}

}  // namespace

namespace {

// A backend on cuda:0 that reaches what nccl's reaches and records the device of what it gets.
class FakeGpuBackend final : public dist::core::BackendImpl {
 public:
  dist::Backend kind() const override { return dist::Backend::nccl; }
  int rank() const override { return 0; }
  int size() const override { return 2; }
  dist::Device device() const override { return dist::Device::cuda(0); }
  bool reaches(dist::Device where) const override { return dist::real::nccl_reaches(device(), where); }
  dist::Work all_reduce(dist::core::Buf data, ReduceOp) override { return seen(data); }
  dist::Work broadcast(dist::core::Buf data, int) override { return seen(data); }
  dist::Work all_gather(dist::core::Buf, dist::core::ConstBuf input) override {
    return seen(input);
  }
  dist::Work send(dist::core::ConstBuf data, int, int) override { return seen(data); }
  dist::Work recv(dist::core::Buf data, int, int) override { return seen(data); }
  dist::Work barrier() override { return {}; }
  std::shared_ptr<dist::core::BackendImpl> split(const std::vector<int>&) override {
    return nullptr;
  }

  std::vector<dist::Device> devices;

 private:
  dist::Work seen(const dist::core::ConstBuf& b) {
    devices.push_back(b.device);
    return dist::core::completed_work();
  }
};

TEST(NcclStagingRule, HostDataAndOwnGpuDataReachTheBackendOtherGpusAreRefused) {
  auto context = std::make_shared<dist::core::Context>();
  context->kind = dist::Backend::nccl;
  context->world_size = 2;
  auto backend = std::make_shared<FakeGpuBackend>();
  context->world = dist::core::make_group_state(*context, {0, 1}, backend);
  dist::core::ContextBinding binding(context.get());

  std::vector<int> host{1, 2};
  dist::all_reduce(host);
  int cell = 0;  // never dereferenced: the fake backend only records the device
  auto own = dist::Tensor::view(&cell, DType::int32, {1}, dist::Device::cuda(0));
  dist::broadcast(own, 0);
  ASSERT_EQ(backend->devices.size(), 2u);
  EXPECT_EQ(backend->devices[0], dist::Device::cpu());
  EXPECT_EQ(backend->devices[1], dist::Device::cuda(0));

  auto other = dist::Tensor::view(&cell, DType::int32, {1}, dist::Device::cuda(1));
  try {
    dist::all_reduce(other);
    ADD_FAILURE() << "a buffer on cuda:1 was accepted by a backend on cuda:0";
  } catch (const dist::InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "cuda:1")) << e.what();
    EXPECT_TRUE(contains(e.what(), "cuda:0")) << e.what();
  }
  EXPECT_EQ(backend->devices.size(), 2u);
}

}  // namespace
