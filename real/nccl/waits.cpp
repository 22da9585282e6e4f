// Communicator's waits: every poll of the nccl backend (ncclCommGetAsyncError, events, the
// stream) against a deadline; errors and timeouts abort the communicator and name whom to blame
// (a p2p call's peer, or the members absent from the roll call of the collective's number).
#include <algorithm>
#include <thread>

#include "core/store/roll_call.hpp"
#include "dist/errors.hpp"
#include "real/nccl/communicator.hpp"
#include "real/nccl/errors.hpp"

namespace dist::real {

void backoff(int round) {
  if (round < 200) std::this_thread::yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, 10 * (round - 199))));
}

std::string Communicator::where(const Operation& op) const {
  return op.name + " on the " + group_text();
}

void Communicator::throw_if_aborted(const Operation& op) const {
  if (!aborted_.empty() && aborted_by_user_) throw Aborted("nccl " + where(op) + ": " + aborted_);
  if (!aborted_.empty())
    throw BackendError("nccl " + where(op) + ": the communicator was aborted after " + aborted_ +
                       "; create a new process group to continue");
}

ncclResult_t Communicator::async_state(const Operation& op) {
  std::lock_guard lock(mutex_);
  throw_if_aborted(op);
  ncclResult_t state = ncclInternalError;
  const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
  return r != ncclSuccess ? r : state;
}

void Communicator::fail(ncclResult_t code, const Operation& op) {
  std::string detail;
  {
    std::lock_guard lock(mutex_);
    if (aborted_.empty()) detail = ncclGetLastError(comm_);
  }
  abort(nccl_error_text(code) + " in " + op.name);
  // A peer's failure: its p2p peer, or the members that do not answer the roll call.
  throw_nccl_error(code, where(op), detail,
                   code == ncclRemoteError ? absent_from(op) : std::vector<int>{});
}

void Communicator::time_out(const Operation& op) {
  abort("the timeout of " + op.name);
  // A collective's timeout names nobody here: the call layer above diagnoses it with the other
  // ranks (core/calls/diagnosis.hpp). A p2p call's names its peer.
  throw_nccl_timeout(where(op), spec_.timeout, op.peer);
}

std::vector<int> Communicator::absent_from(const Operation& op) const {
  if (op.peer >= 0) return {op.peer};
  const std::string key = roll_call_key(spec_.key, op);
  if (!spec_.store || key.empty()) return {};
  const int me = spec_.global_ranks[static_cast<std::size_t>(spec_.rank)];
  return core::roll_call(*spec_.store, key, spec_.global_ranks, me,
                         core::roll_call_window(spec_.timeout))
      .absent;
}

bool Communicator::poll(const std::function<bool()>& ready, const Operation& op,
                        Clock::time_point deadline) {
  const bool done = ready();
  // Checked after ready(): an abort that completed the event (NCCL's kernels exit early) or an
  // error raised meanwhile is seen here, so a result it cut short is never a success.
  const ncclResult_t state = async_state(op);
  if (state != ncclSuccess && state != ncclInProgress) fail(state, op);
  if (done) return true;
  if (Clock::now() >= deadline) time_out(op);
  return false;
}

void Communicator::wait_until(const std::function<bool()>& ready, const Operation& op) {
  wait_until(ready, op, Clock::now() + spec_.timeout);
}

void Communicator::wait_until(const std::function<bool()>& ready, const Operation& op,
                              Clock::time_point deadline) {
  for (int round = 0;; ++round) {
    if (poll(ready, op, deadline)) return;
    backoff(round);
  }
}

void Communicator::complete(ncclResult_t result, const Operation& op) {
  if (result == ncclSuccess) return;
  if (result != ncclInProgress) fail(result, op);
  settle(op);
}

void Communicator::settle(const Operation& op) {
  wait_until([&] { return async_state(op) == ncclSuccess; }, op);
}

void Communicator::wait_idle(const Operation& op) {
  wait_until(
      [&] {
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaErrorNotReady) return false;
    check_cuda(e, [&] { return where(op); });
    return true;
      },
      op);
}

}  // namespace dist::real
