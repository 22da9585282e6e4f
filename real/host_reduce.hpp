// The elementwise reductions the CPU backends run on the host (gloo's reduce functions, mpi's
// MPI_Ops): out[i] = a[i] ∘ b[i], out may alias a or b, with exactly the semantics of
// reference/reduce_op.hpp: wrapping integers, NaN-first min/max with -0 < +0, float16/bfloat16
// computed in float and rounded after every step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include "dist/errors.hpp"
#include "dist/types.hpp"

namespace dist::real {

using ReduceStep = void (*)(void* out, const void* a, const void* b, std::size_t n);
using ReduceFn = std::function<void(void*, const void*, const void*, std::size_t)>;

// Calls f(std::type_identity<T>{}) with T the element type of `dtype`.
template <class F> decltype(auto) with_element_type(DType dtype, F&& f) {
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
ReduceStep reduce_step(DType dtype, ReduceOp op);
inline ReduceFn reduce_function(DType dtype, ReduceOp op) { return reduce_step(dtype, op); }

// The mean's final division of a sum over `world` ranks, in place: integers truncate toward zero
// in a 64-bit type of their signedness; float/double divide by T(world); halves round
// float(sum) / world.
void finish_mean(void* data, std::size_t count, DType dtype, int world);

}  // namespace dist::real
