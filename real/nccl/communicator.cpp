// Communicator: non-blocking NCCL communicators, their streams, and the deadline-bound polling
// every wait of the nccl backend goes through (ncclCommGetAsyncError, abort on timeout or error).
#include "real/nccl/communicator.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "core/group_text.hpp"
#include "core/store/roll_call.hpp"
#include "dist/errors.hpp"
#include "real/nccl/errors.hpp"

namespace dist::real {

namespace {
ncclConfig_t non_blocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

// Spins briefly (collectives are often done within microseconds), then backs off to 1 ms naps.
void pause(int round) {
  if (round < 200) std::this_thread::yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, 10 * (round - 199))));
}
}  // namespace

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (previous_ != device)
    check_cuda(cudaSetDevice(device), "selecting cuda:" + std::to_string(device));
}

DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (previous_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous_)
    (void)cudaSetDevice(previous_);
}

Communicator::Communicator(ncclComm_t comm, CommSpec spec) : comm_(comm), spec_(std::move(spec)) {
  cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking);
  if (e == cudaSuccess)
    e = cudaEventCreateWithFlags(&default_streams_done_, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    (void)ncclCommAbort(comm_);
    if (stream_) (void)cudaStreamDestroy(stream_);
    if (copy_stream_) (void)cudaStreamDestroy(copy_stream_);
    throw_cuda_error(e, "creating the streams of the " + group_text());
  }
}

std::shared_ptr<Communicator> Communicator::create(const ncclUniqueId& id, CommSpec spec) {
  DeviceGuard guard(spec.device);
  ncclConfig_t config = non_blocking_config();
  ncclComm_t comm = nullptr;
  const int size = static_cast<int>(spec.global_ranks.size());
  const ncclResult_t r = ncclCommInitRankConfig(&comm, size, id, spec.rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    const std::string detail = comm ? ncclGetLastError(comm) : "";
    if (comm) (void)ncclCommAbort(comm);
    throw_nccl_error(r,
                     "ncclCommInitRankConfig (rank " + std::to_string(spec.rank) + " of " +
                         std::to_string(size) + ", cuda:" + std::to_string(spec.device) + ")",
                     detail);
  }
  std::shared_ptr<Communicator> c(new Communicator(comm, std::move(spec)));
  c->complete(r, "init");
  return c;
}

std::shared_ptr<Communicator> Communicator::split(const std::vector<int>& ranks,
                                                  const std::string& operation) {
  DeviceGuard guard(spec_.device);
  activate(operation);
  const auto it = std::find(ranks.begin(), ranks.end(), spec_.rank);
  const bool member = it != ranks.end();
  const int key = member ? static_cast<int>(it - ranks.begin()) : 0;
  ncclConfig_t config = non_blocking_config();
  ncclComm_t child = nullptr;
  const ncclResult_t r =
      ncclCommSplit(comm_, member ? 0 : NCCL_SPLIT_NOCOLOR, key, &child, &config);
  try {
    complete(r, operation);
  } catch (...) {
    if (child) (void)ncclCommAbort(child);
    throw;
  }
  if (!member) return nullptr;
  CommSpec spec{{}, key, spec_.device, spec_.timeout, spec_.store, spec_.key + "/" + operation};
  for (const int m : ranks)
    spec.global_ranks.push_back(spec_.global_ranks[static_cast<std::size_t>(m)]);
  // A non-blocking split may hand out the new communicator only when its job has run.
  wait_until([&] { return std::atomic_ref<ncclComm_t>(child).load() != nullptr; }, operation);
  std::shared_ptr<Communicator> c(new Communicator(child, std::move(spec)));
  c->complete(ncclInProgress, operation);  // the child may still be connecting
  return c;
}

Communicator::~Communicator() {
  std::optional<DeviceGuard> guard;
  try {
    guard.emplace(spec_.device);
    std::lock_guard lock(abort_mutex_);
    if (aborted_.empty()) {
      // Finalize flushes this rank's operations; past the deadline we abort instead.
      ncclResult_t r = ncclCommFinalize(comm_);
      const auto deadline = std::chrono::steady_clock::now() + spec_.timeout;
      for (int round = 0; r == ncclInProgress || r == ncclSuccess; ++round) {
        ncclResult_t state = ncclInternalError;
        (void)ncclCommGetAsyncError(comm_, &state);
        if (state != ncclInProgress) {
          r = state;
          break;
        }
        if (std::chrono::steady_clock::now() >= deadline) break;
        pause(round);
      }
      if (r == ncclSuccess) (void)ncclCommDestroy(comm_);
      else (void)ncclCommAbort(comm_);
    }
  } catch (...) {  // a destructor reports nothing; the communicator is gone either way
  }
  if (stream_) (void)cudaStreamDestroy(stream_);
  if (copy_stream_) (void)cudaStreamDestroy(copy_stream_);
  if (default_streams_done_) (void)cudaEventDestroy(default_streams_done_);
}

std::string Communicator::group_text() const {
  return core::group_text(spec_.global_ranks) + " on cuda:" + std::to_string(spec_.device);
}

std::string Communicator::where(const std::string& operation) const {
  return operation + " on the " + group_text();
}

void Communicator::activate(const std::string& operation) {
  {
    std::lock_guard lock(abort_mutex_);
    if (!aborted_.empty())
      throw BackendError("nccl " + where(operation) + ": the communicator was aborted after " +
                         aborted_ + "; create a new process group to continue");
  }
  // Each wait takes the event as last recorded, so one event serves both streams in turn.
  for (cudaStream_t before : {cudaStreamLegacy, cudaStreamPerThread}) {
    check_cuda(cudaEventRecord(default_streams_done_, before), where(operation));
    check_cuda(cudaStreamWaitEvent(stream_, default_streams_done_, 0), where(operation));
  }
}

void Communicator::abort(const std::string& reason) {
  std::lock_guard lock(abort_mutex_);
  if (!aborted_.empty()) return;
  aborted_ = reason;
  (void)ncclCommAbort(comm_);
}

void Communicator::fail(ncclResult_t code, const std::string& operation) {
  std::string detail;
  {
    std::lock_guard lock(abort_mutex_);
    if (aborted_.empty()) detail = ncclGetLastError(comm_);
  }
  abort(nccl_error_text(code) + " in " + operation);
  // A peer's failure: the members that do not answer the roll call are the ones that failed.
  throw_nccl_error(code, where(operation), detail,
                   code == ncclRemoteError ? absent_from(operation) : std::vector<int>{});
}

std::vector<int> Communicator::absent_from(const std::string& operation) const {
  if (!spec_.store) return {};
  const int me = spec_.global_ranks[static_cast<std::size_t>(spec_.rank)];
  return core::roll_call(*spec_.store, spec_.key + "/" + operation, spec_.global_ranks, me,
                         core::roll_call_window(spec_.timeout))
      .absent;
}

void Communicator::wait_until(const std::function<bool()>& ready, const std::string& operation) {
  const auto deadline = std::chrono::steady_clock::now() + spec_.timeout;
  for (int round = 0;; ++round) {
    if (ready()) return;
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = ncclSuccess;
    {
      std::lock_guard lock(abort_mutex_);
      if (!aborted_.empty())
        throw BackendError("nccl " + where(operation) + ": the communicator was aborted after " +
                           aborted_);
      r = ncclCommGetAsyncError(comm_, &state);
    }
    if (r != ncclSuccess) fail(r, operation);
    if (state != ncclSuccess && state != ncclInProgress) fail(state, operation);
    if (std::chrono::steady_clock::now() >= deadline) {
      abort("the timeout of " + operation);
      throw_nccl_timeout(where(operation), spec_.timeout, absent_from(operation));
    }
    pause(round);
  }
}

void Communicator::complete(ncclResult_t result, const std::string& operation) {
  if (result == ncclSuccess) return;
  if (result != ncclInProgress) fail(result, operation);
  wait_until(
      [&] {
    ncclResult_t state = ncclInProgress;
    std::lock_guard lock(abort_mutex_);
    return aborted_.empty() && ncclCommGetAsyncError(comm_, &state) == ncclSuccess &&
           state == ncclSuccess;
      },
      operation);
}

void Communicator::wait_idle(const std::string& operation) {
  wait_until(
      [&] {
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaErrorNotReady) return false;
    check_cuda(e, where(operation));
    return true;
      },
      operation);
}

}  // namespace dist::real
