// How dist's dtypes and reduce ops run on NCCL: the ncclDataType_t of each DType, and for each
// allowed (op, dtype) pair whether NCCL does it natively, as a sum followed by the exact integer
// division of docs/semantics.md (integer mean), or (bitwise ops, which NCCL lacks) as an all_gather
// and a device fold.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>

#include "dist/types.hpp"
#include "real/nccl/kernels.hpp"

namespace dist::real {

ncclDataType_t nccl_dtype(DType dtype);

enum class NcclPlan : std::uint8_t {
  native,           // one NCCL reduction with `op` (float mean is ncclAvg)
  sum_then_divide,  // ncclSum, then divide by the group size truncating toward zero (integer mean)
  gather_then_fold  // all_gather, then fold the ranks' slices with `fold` on the device (band/bor/bxor)
};

struct NcclReduction {
  NcclPlan plan = NcclPlan::native;
  ncclRedOp_t op = ncclSum;                      // for native and sum_then_divide
  kernels::Fold fold = kernels::Fold::none;      // for gather_then_fold
};

// The plan of `op` on `dtype`; InvalidArgument for a pair op_allowed rejects (bitwise on floats).
NcclReduction nccl_reduction(ReduceOp op, DType dtype);
// The device kernels' name of an integer dtype; InvalidArgument for a floating dtype.
kernels::IntType kernel_int_type(DType dtype);
// "all_reduce #3" style operation names are built from these: "native ncclAvg" etc.
std::string describe(const NcclReduction& reduction);

// Whether a buffer on `where` can be used by a communicator on `comm`: its own device in place,
// host memory through staging; other GPUs are refused (as torch's NCCL backend does).
bool nccl_reaches(Device comm, Device where);

}  // namespace dist::real
