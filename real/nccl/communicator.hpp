// One NCCL communicator of one group, with its stream: the only place that calls NCCL on it and
// the only place that waits on the GPU. Communicators are non-blocking (config.blocking = 0);
// every wait polls ncclCommGetAsyncError against a deadline, and on a timeout or an error aborts
// the communicator. Thread safety: one mutex per communicator is held around every NCCL call on
// it (enqueue, poll, abort), so a Work waited on another thread never polls or aborts while the
// issuing thread is inside NCCL. The calls it guards return at once (non-blocking mode), so the
// lock is never held across a wait, and uncontended it costs tens of nanoseconds per call.
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
#include "real/nccl/operation.hpp"

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
  using Clock = std::chrono::steady_clock;

  // Creates the communicator with ncclCommInitRankConfig (non-blocking) and waits, with the
  // deadline, until it is ready. Every member calls it with the same id.
  static std::shared_ptr<Communicator> create(const ncclUniqueId& id, CommSpec spec);
  // ncclCommSplit of this communicator (collective over its members): members of `ranks` (ranks
  // of this communicator, in the new order) get the new communicator, the others null. Every
  // member returns only once this communicator reports ncclSuccess again (NCCL may go on with
  // the split after the call returned); a failure aborts this communicator, then the new one.
  std::shared_ptr<Communicator> split(const std::vector<int>& ranks, const Operation& op);
  // ncclCommShrink of this communicator by the members of `survivors` (ranks of this
  // communicator, in the new order, the caller among them) alone: the others take no part. With
  // `abort_parent` NCCL ends this communicator's pending operations first (NCCL_SHRINK_ABORT,
  // which revokes it as ncclCommRevoke does); without, it waits until this communicator is idle
  // again. The new one's timeout is `timeout`. A failure aborts this communicator, then the new
  // one.
  std::shared_ptr<Communicator> shrink(const std::vector<int>& survivors, bool abort_parent,
                                       std::chrono::milliseconds timeout, const Operation& op);

  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

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
  void activate(const Operation& op);
  // Calls `enqueue(comm)` (NCCL calls on this communicator: one collective, or a whole
  // ncclGroupStart..ncclGroupEnd) under the communicator's lock, then finishes its result as
  // complete() does. Throws BackendError without calling it once the communicator was aborted.
  template <class F>
  void run(const Operation& op, F&& enqueue) {
    ncclResult_t result = ncclSuccess;
    {
      std::lock_guard lock(mutex_);
      throw_if_aborted(op);
      result = enqueue(comm_);
    }
    complete(result, op);
  }
  // Finishes an NCCL call: ncclInProgress is polled until done (deadline); errors abort and throw.
  void complete(ncclResult_t result, const Operation& op);
  // Polls until the communicator's asynchronous state is ncclSuccess, even when the last call
  // returned ncclSuccess (a non-blocking split may go on in the background).
  void settle(const Operation& op);
  // One look, never blocking: true once `ready()` returned true and, checked after it, the
  // communicator was not aborted and has no asynchronous error (after an abort NCCL's kernels
  // exit early and complete their events: such a result is an error, never a success). Throws on
  // an abort, an NCCL error, or when `deadline` has passed (aborting the communicator).
  bool poll(const std::function<bool()>& ready, const Operation& op, Clock::time_point deadline);
  // Polls (as poll) until done; the deadline is the group's timeout from now unless given.
  void wait_until(const std::function<bool()>& ready, const Operation& op);
  void wait_until(const std::function<bool()>& ready, const Operation& op,
                  Clock::time_point deadline);
  // Waits (as wait_until) until every operation enqueued on the stream has finished.
  void wait_idle(const Operation& op);
  // A completion event for a Work (created without timing), reused once given back: creating and
  // destroying one per operation costs a call's time again. Throws BackendError on a CUDA error.
  cudaEvent_t take_event(const Operation& op);
  void give_event(cudaEvent_t event) noexcept;
  // Aborts the communicator (its pending operations fail); later calls raise BackendError, or
  // dist::Aborted with `reason` alone when the user asked for it (`by_user`: dist::abort).
  // ncclCommAbort may block behind a kernel that never ends: it runs on a helper thread, waited
  // for at most abort_wait(timeout), then left to finish in the background.
  void abort(const std::string& reason, bool by_user = false);
  bool aborted() const;

 private:
  Communicator(ncclComm_t comm, CommSpec spec);
  void throw_if_aborted(const Operation& op) const;  // caller holds mutex_
  // The asynchronous state (ncclCommGetAsyncError), or the code it returned; throws if aborted.
  ncclResult_t async_state(const Operation& op);
  [[noreturn]] void fail(ncclResult_t code, const Operation& op);
  [[noreturn]] void time_out(const Operation& op);
  // The member to blame when `op` failed on a peer's side: its peer for p2p, else those absent
  // from the roll call of its key (none without a store or for setup).
  std::vector<int> absent_from(const Operation& op) const;
  std::string where(const Operation& op) const;
  // Starts a communicator NCCL makes from this one in the background (ncclCommSplit,
  // ncclCommShrink): `call(comm, slot)` under the lock (refused once aborted), then `wait(child)`
  // for what the call needs (`child()` reads the handle NCCL writes). Returns the new handle
  // (null: none for this rank); on a failure aborts it, if any, and throws.
  ncclComm_t spawn_child(const Operation& op,
                         const std::function<ncclResult_t(ncclComm_t, ncclComm_t*)>& call,
                         const std::function<void(const std::function<ncclComm_t()>& child)>& wait);
  // The member `key` of the communicator `child` that `call` made of `ranks`, once it is ready.
  std::shared_ptr<Communicator> make_child(ncclComm_t child, const std::vector<int>& ranks, int key,
                                           const Operation& op, const char* call = "ncclCommSplit",
                                           std::chrono::milliseconds timeout = {});

  ncclComm_t comm_ = nullptr;
  CommSpec spec_;
  cudaStream_t stream_ = nullptr;               // the communicator's operations, in issue order
  cudaStream_t copy_stream_ = nullptr;          // copies of finished results back to the host
  cudaEvent_t default_streams_done_ = nullptr;  // recorded on the default streams by activate()
  mutable std::mutex mutex_;  // held around every NCCL call on comm_ and every use of aborted_
  std::mutex events_mutex_;
  std::vector<cudaEvent_t> events_;  // given back by finished Works, for the next ones
  std::string aborted_;       // why it was aborted; empty while usable
  bool aborted_by_user_ = false;  // by dist::abort: its calls raise Aborted
};

// The rhythm of every poll: spins briefly (collectives often finish within microseconds), then
// backs off to 1 ms naps.
void backoff(int round);
// How long abort() waits for ncclCommAbort: 10 s, or the group's timeout when shorter.
std::chrono::milliseconds abort_wait(std::chrono::milliseconds timeout);
// ncclCommAbort(comm) on a helper thread with `device` current, waited for at most `bound`;
// false when it had not returned by then (it goes on in the background).
bool abort_within(ncclComm_t comm, int device, std::chrono::milliseconds bound);

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
