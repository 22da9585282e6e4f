// The device-side work of the nccl backend (kernels.cu, Thrust): folding gathered slices with a
// bitwise op and the exact integer mean's division. Plain C++17 with no project headers, so
// the .cu stays small and quick to compile.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace dist::real::kernels {

enum class IntType : int { int8, uint8, int32, uint32, int64, uint64 };
enum class Fold : int { none, band, bor, bxor };

// Enqueues on `stream`: out[i] = (in[i] ∘ in[stride + i] ∘ ... ∘ in[(slices - 1) * stride + i])
// / divisor for i < count, ∘ being `fold` (none: slices must be 1), the division truncating toward
// zero (skipped when divisor is 1). `out` may be `in`. Returns the CUDA error, cudaSuccess if none.
cudaError_t integer_finish(IntType type, void* out, const void* in, std::size_t count, int slices,
                           std::size_t stride, Fold fold, long long divisor, cudaStream_t stream);

}  // namespace dist::real::kernels
