// One NCCL communicator of one group, with its stream: the only place that waits on the GPU.
// Communicators are non-blocking (config.blocking = 0); every wait polls ncclCommGetAsyncError
// against the group's deadline, and on a timeout or an error aborts the communicator.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/store/store.hpp"

namespace dist::real {

struct CommSpec {
  std::vector<int> global_ranks;  // the members' world ranks, in group order
  int rank = 0;                   // the caller's rank in the group
  int device = 0;                 // the CUDA device the communicator runs on
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  // Where the members answer the roll call after a timeout or a peer's failure (null: no roll
  // call), and this communicator's key there ("nccl/world", then one per split).
  std::shared_ptr<core::Store> store;
  std::string key;
};

class Communicator {
 public:
  // Creates the communicator with ncclCommInitRankConfig (non-blocking) and waits, with the
  // deadline, until it is ready. Every member calls it with the same id.
  static std::shared_ptr<Communicator> create(const ncclUniqueId& id, CommSpec spec);
  // ncclCommSplit of this communicator (collective over its members): members of `ranks` (ranks
  // of this communicator, in the new order) get the new communicator, the others null.
  std::shared_ptr<Communicator> split(const std::vector<int>& ranks, const std::string& operation);

  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  ncclComm_t get() const { return comm_; }
  cudaStream_t stream() const { return stream_; }
  cudaStream_t copy_stream() const { return copy_stream_; }
  const CommSpec& spec() const { return spec_; }
  int size() const { return static_cast<int>(spec_.global_ranks.size()); }
  // "group of world ranks [0, 1] on cuda:0"
  std::string group_text() const;

  // Throws BackendError when the communicator was aborted before; else orders the stream after
  // the work already queued on CUDA's default streams of the calling thread (legacy and
  // per-thread), as torch orders its NCCL stream after the current stream: a kernel, cudaMemcpy
  // or cudaMemset that wrote a tensor before the call is finished before NCCL reads it. The
  // caller has made the communicator's device current.
  void activate(const std::string& operation);
  // Finishes an NCCL call: ncclInProgress is polled until done (deadline); errors abort and throw.
  void complete(ncclResult_t result, const std::string& operation);
  // Polls `ready` until it returns true, checking NCCL's asynchronous errors and the deadline.
  void wait_until(const std::function<bool()>& ready, const std::string& operation);
  // Waits (as wait_until) until every operation enqueued on the stream has finished.
  void wait_idle(const std::string& operation);
  // Aborts the communicator (its pending operations fail); later calls raise BackendError.
  void abort(const std::string& reason);

 private:
  Communicator(ncclComm_t comm, CommSpec spec);
  [[noreturn]] void fail(ncclResult_t code, const std::string& operation);
  // The members that do not answer the roll call of `operation` (none without a store).
  std::vector<int> absent_from(const std::string& operation) const;
  std::string where(const std::string& operation) const;

  ncclComm_t comm_ = nullptr;
  CommSpec spec_;
  cudaStream_t stream_ = nullptr;               // the communicator's operations, in issue order
  cudaStream_t copy_stream_ = nullptr;          // copies of finished results back to the host
  cudaEvent_t default_streams_done_ = nullptr;  // recorded on the default streams by activate()
  std::mutex abort_mutex_;
  std::string aborted_;  // why it was aborted; empty while usable
};

// The device current on this thread when constructed, restored on destruction.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace dist::real
