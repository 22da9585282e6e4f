// The Work of an nccl operation: a CUDA event (the communicator's, reused) recorded on its stream
// after it.
// wait() and is_completed() poll the event against the operation's deadline (the group's timeout
// from when it was issued), aborting the communicator on a timeout or an NCCL error; an event
// that completes because the communicator was aborted is an error, never a success. An event
// cannot tell whether it finished before the abort, so a Work first looked at after one raises
// even if its operation had finished (one already waited keeps its success). Then staged results
// are copied back to the host and the staging memory is freed.
#pragma once

#include <cuda_runtime_api.h>

#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/work_state.hpp"
#include "real/nccl/communicator.hpp"

namespace dist::real {

// A result staged in device memory that belongs in host memory once the operation is done.
struct CopyBack {
  void* host = nullptr;
  const void* device = nullptr;
  std::size_t bytes = 0;
};

// Frees staging memory (from cudaMallocAsync) in `stream`'s order, after what is queued there,
// and empties `memory`.
void free_in_order(std::vector<void*>& memory, cudaStream_t stream);

class NcclWork final : public detail::WorkState {
 public:
  // Records the event on comm's stream now. `copies` run after completion; `device_memory` (from
  // cudaMallocAsync) is freed after the copies.
  NcclWork(std::shared_ptr<Communicator> comm, Operation op, std::vector<CopyBack> copies,
           std::vector<void*> device_memory);
  ~NcclWork() override;  // never waited for: the staging memory is freed after the operation

  void wait() override;
  bool is_completed() override;

 private:
  bool event_done();  // cudaEventQuery; throws on a CUDA error
  void finish();      // the copies back and the frees (after the event)

  std::shared_ptr<Communicator> comm_;
  Operation op_;
  Communicator::Clock::time_point deadline_;
  std::vector<CopyBack> copies_;
  std::vector<void*> device_memory_;
  cudaEvent_t event_ = nullptr;
  std::mutex mutex_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace dist::real
