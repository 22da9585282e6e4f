// integer_finish on the device with Thrust: one transform per integer type folds the gathered
// slices and divides, enqueued on the communicator's stream without synchronising it.
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>
#include <thrust/transform.h>

#include <cstdint>
#include <type_traits>

#include "real/nccl/kernels.hpp"

namespace dist::real::kernels {

namespace {

template <class T> struct Finish {
  const T* in;
  std::size_t stride;
  int slices;
  Fold fold;
  long long divisor;

  __device__ T operator()(std::size_t i) const {
    T acc = in[i];
    for (int s = 1; s < slices; ++s) {
      const T x = in[static_cast<std::size_t>(s) * stride + i];
      if (fold == Fold::band) acc = static_cast<T>(acc & x);
      else if (fold == Fold::bor) acc = static_cast<T>(acc | x);
      else acc = static_cast<T>(acc ^ x);
    }
    if (divisor == 1) return acc;
    // C++ integer division truncates toward zero; a 64-bit type of T's signedness holds any T.
    if constexpr (std::is_signed_v<T>) return static_cast<T>(static_cast<std::int64_t>(acc) / divisor);
    else return static_cast<T>(static_cast<std::uint64_t>(acc) / static_cast<std::uint64_t>(divisor));
  }
};

template <class T>
cudaError_t run(void* out, const void* in, std::size_t count, int slices, std::size_t stride,
                Fold fold, long long divisor, cudaStream_t stream) {
  const Finish<T> f{static_cast<const T*>(in), stride, slices, fold, divisor};
  (void)cudaGetLastError();  // an earlier call's error left on this thread is not this launch's
  thrust::transform(thrust::cuda::par_nosync.on(stream), thrust::counting_iterator<std::size_t>(0),
                    thrust::counting_iterator<std::size_t>(count), static_cast<T*>(out), f);
  return cudaGetLastError();
}

}  // namespace

cudaError_t integer_finish(IntType type, void* out, const void* in, std::size_t count, int slices,
                           std::size_t stride, Fold fold, long long divisor, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (slices < 1 || divisor < 1 || (fold == Fold::none && slices != 1)) return cudaErrorInvalidValue;
  try {
    switch (type) {
      case IntType::int8: return run<std::int8_t>(out, in, count, slices, stride, fold, divisor, stream);
      case IntType::uint8: return run<std::uint8_t>(out, in, count, slices, stride, fold, divisor, stream);
      case IntType::int32: return run<std::int32_t>(out, in, count, slices, stride, fold, divisor, stream);
      case IntType::uint32: return run<std::uint32_t>(out, in, count, slices, stride, fold, divisor, stream);
      case IntType::int64: return run<std::int64_t>(out, in, count, slices, stride, fold, divisor, stream);
      case IntType::uint64: return run<std::uint64_t>(out, in, count, slices, stride, fold, divisor, stream);
    }
  } catch (const thrust::system_error& e) {
    return static_cast<cudaError_t>(e.code().value());
  }
  return cudaErrorInvalidValue;
}

}  // namespace dist::real::kernels
