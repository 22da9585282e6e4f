// NcclWork: event polling through the communicator (deadline, abort state, asynchronous errors),
// then the copies back to the host on the communicator's copy stream (the main stream may hold
// later operations by then).
#include "real/nccl/work.hpp"

#include <optional>

#include "real/nccl/errors.hpp"

namespace dist::real {

NcclWork::NcclWork(std::shared_ptr<Communicator> comm, Operation op, std::vector<CopyBack> copies,
                   std::vector<void*> device_memory)
    : comm_(std::move(comm)),
      op_(std::move(op)),
      deadline_(Communicator::Clock::now() + comm_->spec().timeout),
      copies_(std::move(copies)),
      device_memory_(std::move(device_memory)) {
  try {
    event_ = comm_->take_event(op_);
  } catch (...) {
    free_in_order(device_memory_, comm_->stream());  // the destructor will not run
    throw;
  }
  if (const cudaError_t e = cudaEventRecord(event_, comm_->stream()); e != cudaSuccess) {
    (void)cudaEventDestroy(event_);
    event_ = nullptr;
    free_in_order(device_memory_, comm_->stream());  // the destructor will not run
    comm_->abort("a CUDA error recording the event of " + op_.name);
    throw_cuda_error(e, op_.name);
  }
}

NcclWork::~NcclWork() {
  // A Work may be dropped on any thread: its streams and memory belong to the group's device.
  std::optional<DeviceGuard> guard;
  try {
    guard.emplace(comm_->spec().device);
  } catch (...) {  // a destructor reports nothing; the frees below fail the same way
  }
  free_in_order(device_memory_, comm_->stream());  // never waited for: after the operation
  if (event_) comm_->give_event(event_);  // re-recorded by a later Work: nobody looks at it now
}

void free_in_order(std::vector<void*>& memory, cudaStream_t stream) {
  for (void* p : memory) (void)cudaFreeAsync(p, stream);
  memory.clear();
}

bool NcclWork::event_done() {
  const cudaError_t e = cudaEventQuery(event_);
  if (e == cudaErrorNotReady) return false;
  check_cuda(e, op_.name);
  return true;
}

void NcclWork::finish() {
  for (const CopyBack& c : copies_)
    check_cuda(
        cudaMemcpyAsync(c.host, c.device, c.bytes, cudaMemcpyDeviceToHost, comm_->copy_stream()),
        [&] { return op_.name + ": copying the result back to the host"; });
  // The copies read finished results on an otherwise idle stream: this returns promptly.
  if (!copies_.empty())
    check_cuda(cudaStreamSynchronize(comm_->copy_stream()),
               [&] { return op_.name + ": copying back"; });
  free_in_order(device_memory_, comm_->copy_stream());
  copies_.clear();
}

void NcclWork::wait() {
  std::lock_guard lock(mutex_);
  if (!done_) {
    try {
      DeviceGuard guard(comm_->spec().device);
      comm_->wait_until([&] { return event_done(); }, op_, deadline_);
      finish();
    } catch (...) {
      error_ = std::current_exception();
    }
    done_ = true;
  }
  if (error_) std::rethrow_exception(error_);
}

bool NcclWork::is_completed() {
  std::lock_guard lock(mutex_);
  if (done_) return true;
  try {
    DeviceGuard guard(comm_->spec().device);
    // One look with the same checks as wait(): the deadline, an abort, asynchronous errors.
    if (!comm_->poll([&] { return event_done(); }, op_, deadline_)) return false;
    finish();
  } catch (...) {
    error_ = std::current_exception();
  }
  done_ = true;
  return true;
}

}  // namespace dist::real
