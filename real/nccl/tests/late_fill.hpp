// Device helper of the nccl tests (late_fill.cu): a write that lands late on the default stream.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>

namespace nccl_test {

// Enqueues on cudaStreamLegacy a kernel that waits `delay` on the GPU, then sets data[0..count)
// to `value`; returns at once (the launch's error, if any).
cudaError_t fill_late_on_default_stream(int* data, std::size_t count, int value,
                                        std::chrono::milliseconds delay);

}  // namespace nccl_test
