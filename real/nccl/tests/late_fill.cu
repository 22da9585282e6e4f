// A kernel that writes a buffer only after a delay, on CUDA's legacy default stream: the tests
// check that a collective called right after it waits for it (Communicator::activate).
#include "real/nccl/tests/late_fill.hpp"

namespace nccl_test {

namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void fill_late(int* data, std::size_t count, int value, unsigned long long delay_ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < delay_ns) {
  }
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    data[i] = value;
}

}  // namespace

cudaError_t fill_late_on_default_stream(int* data, std::size_t count, int value,
                                        std::chrono::milliseconds delay) {
  fill_late<<<1, 256, 0, cudaStreamLegacy>>>(data, count, value,
                                             static_cast<unsigned long long>(delay.count()) * 1000000ull);
  return cudaGetLastError();
}

}  // namespace nccl_test
