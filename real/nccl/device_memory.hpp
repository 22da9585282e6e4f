// The CUDA provider of core::DeviceMemory (cuda tensors). world.cpp registers it at startup.
#pragma once

#include "core/device_memory.hpp"

namespace dist::real {

core::DeviceMemory& cuda_device_memory();

}  // namespace dist::real
