// The one set of host reduction kernels (sim's chunked folds, gloo's reduce functions, mpi's
// MPI_Ops): out[i] = a[i] ∘ b[i], out may alias a or b, with exactly the semantics of
// reference/reduce_op.hpp: wrapping integers, NaN-first min/max with -0 < +0, float16/bfloat16
// computed in float and rounded after every step. reference/ stays the independent oracle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "dist/errors.hpp"
#include "dist/types.hpp"

namespace dist::core {

using ReduceStep = void (*)(void* out, const void* a, const void* b, std::size_t n);

// Calls f(std::type_identity<T>{}) with T the element type of `dtype`.
template <class F>
decltype(auto) with_element_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::int8: return f(std::type_identity<std::int8_t>{});
    case DType::uint8: return f(std::type_identity<std::uint8_t>{});
    case DType::int32: return f(std::type_identity<std::int32_t>{});
    case DType::uint32: return f(std::type_identity<std::uint32_t>{});
    case DType::int64: return f(std::type_identity<std::int64_t>{});
    case DType::uint64: return f(std::type_identity<std::uint64_t>{});
    case DType::float16: return f(std::type_identity<float16>{});
    case DType::bfloat16: return f(std::type_identity<bfloat16>{});
    case DType::float32: return f(std::type_identity<float>{});
    case DType::float64: return f(std::type_identity<double>{});
  }
  throw InvalidArgument("unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

// The combining step of `op` for `dtype` (mean combines as sum; see finish_mean). `op` must be
// allowed for `dtype` (validated above the backend interface).
DIST_API ReduceStep reduce_step(DType dtype, ReduceOp op);

// The mean's final division of a sum over `world` ranks, in place: integers truncate toward zero
// in a 64-bit type of their signedness; float/double divide by T(world); halves round
// float(sum) / world.
DIST_API void finish_mean(void* data, std::size_t count, DType dtype, int world);

// premul_sum's scaling, from `in` into `out` (may alias): out[i] = in[i] * factor, in double for
// float64, in float otherwise (halves rounded once). `dtype` must be floating.
DIST_API void premultiply(void* out, const void* in, std::size_t count, DType dtype, double factor);

}  // namespace dist::core
