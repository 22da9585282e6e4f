// dist's types in MPI's terms: each DType's MPI datatype, each (dtype, op) pair's MPI_Op, and
// element counts as MPI's int. The operations are user operations running the host reductions
// of core/host_reduce.hpp, so min/max of NaN and -0, integer wrap-around and half-precision
// rounding are exactly the reference's, whatever MPI's built-in operations would do.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

#include "dist/types.hpp"

namespace dist::real {

// float16 and bfloat16 travel as MPI_UINT16_T (their reductions are ours).
MPI_Datatype mpi_datatype(DType dtype);

// The combining step of `op` on `dtype` (mean combines as sum; see finish_mean), created on first
// use. Call under the MPI lock, after MPI is initialised.
MPI_Op mpi_op(DType dtype, ReduceOp op);

// `count` as MPI's int; InvalidArgument naming `operation` above INT_MAX elements (MPI-3 counts).
int mpi_count(std::size_t count, const char* operation);

}  // namespace dist::real
