// CUDA's memory for dist::Tensor (core/device_memory.hpp): stream-ordered cudaMallocAsync and
// cudaFreeAsync on the legacy default stream of the tensor's device, cudaMemcpy/cudaMemset on the
// same stream (a copy to the host returns finished; one on the device may still run, and a
// collective's stream waits for it: Communicator::activate). A free never blocks the host: it
// lands after the stream's earlier work, not after the whole device as cudaFree's implicit
// synchronisation would (forever, behind an nccl operation that never ends). An operation using
// the tensor is finished once its Work was waited, which dist::Work requires before buffers die.
// Registered while this library is linked, so cuda tensors work in any program built with the
// nccl backend, before or without init_process_group.
#include "real/nccl/device_memory.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "real/nccl/communicator.hpp"
#include "real/nccl/errors.hpp"

namespace dist::real {

namespace {

class CudaMemory final : public core::DeviceMemory {
 public:
  CudaMemory() { core::set_device_memory(this); }
  ~CudaMemory() override {
    if (core::device_memory() == this) core::set_device_memory(nullptr);
  }

  std::shared_ptr<void> allocate(Device device, std::size_t bytes) override {
    DeviceGuard guard(device.index);
    void* p = nullptr;
    check_cuda(cudaMallocAsync(&p, bytes == 0 ? 1 : bytes, cudaStreamLegacy),
               "Tensor: allocating " + std::to_string(bytes) + " bytes on " + to_string(device));
    const int index = device.index;
    return {p, [index](void* q) {
              int previous = -1;
              (void)cudaGetDevice(&previous);
              (void)cudaSetDevice(index);
              (void)cudaFreeAsync(q, cudaStreamLegacy);
              if (previous >= 0) (void)cudaSetDevice(previous);
            }};
  }

  void copy(void* dst, Device dst_device, const void* src, Device src_device,
            std::size_t bytes) override {
    DeviceGuard guard(dst_device.is_cuda() ? dst_device.index : src_device.index);
    check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault),
               "Tensor: copying " + std::to_string(bytes) + " bytes from " + to_string(src_device) +
                   " to " + to_string(dst_device));
  }

  void zero(void* data, Device device, std::size_t bytes) override {
    DeviceGuard guard(device.index);
    check_cuda(cudaMemset(data, 0, bytes),
               "Tensor: zeroing " + std::to_string(bytes) + " bytes on " + to_string(device));
  }
};

}  // namespace

core::DeviceMemory& cuda_device_memory() {
  static CudaMemory memory;
  return memory;
}

}  // namespace dist::real
