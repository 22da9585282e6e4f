// Memory on cuda devices for dist::Tensor (empty, zeros, clone, to, copy_from) and so for the
// collectives that return new tensors. core has no CUDA: a backend built with it registers a
// provider (real/nccl does, when linked); without one, cuda tensors can be viewed and exchanged,
// not allocated or copied, and saying so is the provider's absence.
#pragma once

#include <cstddef>
#include <memory>

#include "dist/export.hpp"
#include "dist/types.hpp"

namespace dist::core {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // `bytes` of memory on the cuda device `device`, freed with the last owner.
  virtual std::shared_ptr<void> allocate(Device device, std::size_t bytes) = 0;
  // Copies `bytes` from `src` to `dst`, either on the cpu or a cuda device; returns when done.
  virtual void copy(void* dst, Device dst_device, const void* src, Device src_device,
                    std::size_t bytes) = 0;
  // Sets `bytes` at `data` on the cuda device `device` to zero; returns when done.
  virtual void zero(void* data, Device device, std::size_t bytes) = 0;
};

// The registered provider (null when none). Registering replaces the previous one; the provider
// must outlive every use (providers are static objects).
DIST_API DeviceMemory* device_memory();
DIST_API void set_device_memory(DeviceMemory* memory);

}  // namespace dist::core
