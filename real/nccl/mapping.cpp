// The dtype and op tables of the nccl backend (see mapping.hpp).
#include "real/nccl/mapping.hpp"

#include "dist/errors.hpp"

namespace dist::real {

ncclDataType_t nccl_dtype(DType dtype) {
  switch (dtype) {
    case DType::int8: return ncclInt8;
    case DType::uint8: return ncclUint8;
    case DType::int32: return ncclInt32;
    case DType::uint32: return ncclUint32;
    case DType::int64: return ncclInt64;
    case DType::uint64: return ncclUint64;
    case DType::float16: return ncclFloat16;
    case DType::bfloat16: return ncclBfloat16;
    case DType::float32: return ncclFloat32;
    case DType::float64: return ncclFloat64;
  }
  throw InvalidArgument("nccl: unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

kernels::IntType kernel_int_type(DType dtype) {
  switch (dtype) {
    case DType::int8: return kernels::IntType::int8;
    case DType::uint8: return kernels::IntType::uint8;
    case DType::int32: return kernels::IntType::int32;
    case DType::uint32: return kernels::IntType::uint32;
    case DType::int64: return kernels::IntType::int64;
    case DType::uint64: return kernels::IntType::uint64;
    default: break;
  }
  throw InvalidArgument("nccl: the device kernels take integer dtypes only, not " +
                        std::string(to_string(dtype)));
}

NcclReduction nccl_reduction(ReduceOp op, DType dtype) {
  if (!op_allowed(op, dtype))
    throw InvalidArgument("nccl: reduce op '" + std::string(to_string(op)) +
                          "' is not defined for dtype " + std::string(to_string(dtype)));
  switch (op) {
    case ReduceOp::sum: return {NcclPlan::native, ncclSum};
    case ReduceOp::product: return {NcclPlan::native, ncclProd};
    case ReduceOp::min: return {NcclPlan::native, ncclMin};
    case ReduceOp::max: return {NcclPlan::native, ncclMax};
    case ReduceOp::mean:
      return is_floating(dtype) ? NcclReduction{NcclPlan::native, ncclAvg}
                                : NcclReduction{NcclPlan::sum_then_divide, ncclSum};
    case ReduceOp::band: return {NcclPlan::gather_then_fold, ncclSum, kernels::Fold::band};
    case ReduceOp::bor: return {NcclPlan::gather_then_fold, ncclSum, kernels::Fold::bor};
    case ReduceOp::bxor: return {NcclPlan::gather_then_fold, ncclSum, kernels::Fold::bxor};
  }
  throw InvalidArgument("nccl: unknown reduce op " + std::to_string(static_cast<int>(op)));
}

std::string describe(const NcclReduction& reduction) {
  const auto op_name = [](ncclRedOp_t op) -> std::string {
    switch (op) {
      case ncclSum: return "ncclSum";
      case ncclProd: return "ncclProd";
      case ncclMin: return "ncclMin";
      case ncclMax: return "ncclMax";
      case ncclAvg: return "ncclAvg";
      default: return "ncclRedOp " + std::to_string(static_cast<int>(op));
    }
  };
  switch (reduction.plan) {
    case NcclPlan::native: return op_name(reduction.op);
    case NcclPlan::sum_then_divide: return op_name(reduction.op) + ", then integer division";
    case NcclPlan::gather_then_fold: break;
  }
  const char* fold = reduction.fold == kernels::Fold::band  ? "band"
                     : reduction.fold == kernels::Fold::bor ? "bor"
                                                            : "bxor";
  return std::string("all_gather, then a device ") + fold + " fold";
}

bool nccl_reaches(Device comm, Device where) { return where.is_cpu() || where == comm; }

}  // namespace dist::real
