// Communicator's life: non-blocking NCCL communicators and their streams, created, split,
// aborted (bounded, see abort_within) and destroyed. The waits are in waits.cpp.
#include "real/nccl/communicator.hpp"

#include <algorithm>
#include <atomic>
#include <future>
#include <optional>
#include <system_error>
#include <thread>

#include "core/group_text.hpp"
#include "dist/errors.hpp"
#include "real/nccl/errors.hpp"

namespace dist::real {

namespace {
ncclConfig_t non_blocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}
}  // namespace

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (previous_ != device)
    check_cuda(cudaSetDevice(device),
               [device] { return "selecting cuda:" + std::to_string(device); });
}

DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (previous_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous_)
    (void)cudaSetDevice(previous_);
}

std::chrono::milliseconds abort_wait(std::chrono::milliseconds timeout) {
  return std::min<std::chrono::milliseconds>(std::chrono::seconds(10), timeout);
}

bool abort_within(ncclComm_t comm, int device, std::chrono::milliseconds bound) {
  auto returned = std::make_shared<std::promise<void>>();
  std::future<void> done = returned->get_future();
  try {
    std::thread([comm, device, returned] {
      (void)cudaSetDevice(device);
      (void)ncclCommAbort(comm);
      returned->set_value();
    }).detach();
  } catch (const std::system_error&) {  // no thread to be had: abort here, unbounded
    (void)ncclCommAbort(comm);
    return true;
  }
  return done.wait_for(bound) == std::future_status::ready;
}

Communicator::Communicator(ncclComm_t comm, CommSpec spec) : comm_(comm), spec_(std::move(spec)) {
  cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking);
  if (e == cudaSuccess)
    e = cudaEventCreateWithFlags(&default_streams_done_, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    (void)abort_within(comm_, spec_.device, abort_wait(spec_.timeout));
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
    if (comm) (void)abort_within(comm, spec.device, abort_wait(spec.timeout));
    throw_nccl_error(r,
                     "ncclCommInitRankConfig (rank " + std::to_string(spec.rank) + " of " +
                         std::to_string(size) + ", cuda:" + std::to_string(spec.device) + ")",
                     detail);
  }
  std::shared_ptr<Communicator> c(new Communicator(comm, std::move(spec)));
  c->settle({"init", 0, -1});
  return c;
}

ncclComm_t Communicator::spawn_child(
    const Operation& op, const std::function<ncclResult_t(ncclComm_t, ncclComm_t*)>& call,
    const std::function<void(const std::function<ncclComm_t()>& child)>& wait) {
  // NCCL may write the new handle from its background thread after the call returned: the slot
  // lives on the heap and is left behind (a pointer's worth) when the call fails midway.
  auto* slot = new ncclComm_t(nullptr);
  const std::function<ncclComm_t()> child_now = [slot] {
    return std::atomic_ref<ncclComm_t>(*slot).load();
  };
  ncclResult_t r = ncclSuccess;
  {
    std::lock_guard lock(mutex_);
    if (!aborted_.empty()) delete slot;
    throw_if_aborted(op);
    r = call(comm_, slot);
  }
  try {
    if (r != ncclSuccess && r != ncclInProgress) fail(r, op);
    wait(child_now);
  } catch (...) {  // fail() and the timeout aborted the parent; then the child
    if (const ncclComm_t child = child_now())
      (void)abort_within(child, spec_.device, abort_wait(spec_.timeout));
    throw;
  }
  const ncclComm_t child = child_now();
  delete slot;
  return child;
}

std::shared_ptr<Communicator> Communicator::split(const std::vector<int>& ranks,
                                                  const Operation& op) {
  DeviceGuard guard(spec_.device);
  activate(op);
  const auto it = std::find(ranks.begin(), ranks.end(), spec_.rank);
  const bool member = it != ranks.end();
  const int key = member ? static_cast<int>(it - ranks.begin()) : 0;
  ncclConfig_t config = non_blocking_config();
  const ncclComm_t child = spawn_child(
      op,
      [&](ncclComm_t parent, ncclComm_t* slot) {
    return ncclCommSplit(parent, member ? 0 : NCCL_SPLIT_NOCOLOR, key, slot, &config);
      },
      // Every rank, member or not, even after ncclSuccess: until the parent reports ncclSuccess
      // it is busy, and a barrier on it would fail with ncclInvalidArgument.
      [&](const auto&) { settle(op); });
  if (member) return make_child(child, ranks, key, op);
  if (child) (void)abort_within(child, spec_.device, abort_wait(spec_.timeout));  // not ours
  return nullptr;
}

std::shared_ptr<Communicator> Communicator::shrink(const std::vector<int>& survivors,
                                                   bool abort_parent,
                                                   std::chrono::milliseconds timeout,
                                                   const Operation& op) {
  DeviceGuard guard(spec_.device);
  std::vector<int> excluded;
  for (int r = 0; r < size(); ++r)
    if (std::find(survivors.begin(), survivors.end(), r) == survivors.end()) excluded.push_back(r);
  const int key = static_cast<int>(std::find(survivors.begin(), survivors.end(), spec_.rank) -
                                   survivors.begin());
  ncclConfig_t config = non_blocking_config();
  const ncclComm_t child = spawn_child(
      op,
      [&](ncclComm_t parent, ncclComm_t* slot) {
    return ncclCommShrink(parent, excluded.data(), static_cast<int>(excluded.size()), slot, &config,
                          abort_parent ? NCCL_SHRINK_ABORT : NCCL_SHRINK_DEFAULT);
      },
      [&](const std::function<ncclComm_t()>& child_now) {
    // The parent goes on: wait until it is idle again, as after a split. Revoked (aborted):
    // wait only for the new handle.
    if (!abort_parent) return settle(op);
    const auto deadline = Clock::now() + spec_.timeout;
    for (int round = 0; !child_now(); ++round) {
      if (Clock::now() >= deadline) time_out(op);
      backoff(round);
    }
  });
  return make_child(child, survivors, key, op, "ncclCommShrink", timeout);
}

std::shared_ptr<Communicator> Communicator::make_child(ncclComm_t child,
                                                       const std::vector<int>& ranks, int key,
                                                       const Operation& op, const char* call,
                                                       std::chrono::milliseconds timeout) {
  if (!child) {
    abort(std::string(call) + " in " + op.name + " returned no communicator");
    throw BackendError("nccl " + where(op) + ": " + call +
                       " returned no communicator for a member; the communicator was aborted "
                       "(create a new process group to continue)");
  }
  CommSpec spec{{},           key,
                spec_.device, timeout.count() > 0 ? timeout : spec_.timeout,
                spec_.store,  spec_.key + "/" + op.name};
  for (const int m : ranks)
    spec.global_ranks.push_back(spec_.global_ranks[static_cast<std::size_t>(m)]);
  std::shared_ptr<Communicator> c;
  try {
    c.reset(new Communicator(child, std::move(spec)));  // aborts the child when it throws
  } catch (...) {
    abort("a failed " + op.name);
    throw;
  }
  // The child may still be connecting. On its failure: the parent is aborted, then the child.
  const auto deadline = Clock::now() + spec_.timeout;
  for (int round = 0;; ++round) {
    const ncclResult_t state = c->async_state(op);
    if (state == ncclSuccess) return c;
    if (state != ncclInProgress) {
      abort("a failed " + op.name + " (the new communicator: " + nccl_error_text(state) + ")");
      c->fail(state, op);
    }
    if (Clock::now() >= deadline) {
      abort("the timeout of " + op.name + " (the new communicator never became ready)");
      c->time_out(op);
    }
    backoff(round);
  }
}

Communicator::~Communicator() {
  std::optional<DeviceGuard> guard;
  try {
    guard.emplace(spec_.device);
    std::unique_lock lock(mutex_);  // nobody else holds this communicator any more
    if (aborted_.empty()) {
      // Finalize flushes this rank's operations; past the deadline we abort instead.
      ncclResult_t r = ncclCommFinalize(comm_);
      const auto deadline = Clock::now() + spec_.timeout;
      for (int round = 0; r == ncclInProgress || r == ncclSuccess; ++round) {
        ncclResult_t state = ncclInternalError;
        (void)ncclCommGetAsyncError(comm_, &state);
        if (state != ncclInProgress) {
          r = state;
          break;
        }
        if (Clock::now() >= deadline) break;
        backoff(round);
      }
      if (r == ncclSuccess) (void)ncclCommDestroy(comm_);
      else (void)abort_within(comm_, spec_.device, abort_wait(spec_.timeout));
    }
  } catch (...) {  // a destructor reports nothing; the communicator is gone either way
  }
  if (stream_) (void)cudaStreamDestroy(stream_);
  if (copy_stream_) (void)cudaStreamDestroy(copy_stream_);
  if (default_streams_done_) (void)cudaEventDestroy(default_streams_done_);
  for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
}

cudaEvent_t Communicator::take_event(const Operation& op) {
  {
    std::lock_guard lock(events_mutex_);
    if (!events_.empty()) {
      cudaEvent_t e = events_.back();
      events_.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), [&] { return where(op); });
  return e;
}

void Communicator::give_event(cudaEvent_t event) noexcept {
  try {
    std::lock_guard lock(events_mutex_);
    events_.push_back(event);
  } catch (...) {  // no room to keep it: destroyed instead
    (void)cudaEventDestroy(event);
  }
}

std::string Communicator::group_text() const {
  return core::group_text(spec_.global_ranks) + " on cuda:" + std::to_string(spec_.device);
}

void Communicator::activate(const Operation& op) {
  std::lock_guard lock(mutex_);
  throw_if_aborted(op);
  // Each wait takes the event as last recorded, so one event serves both streams in turn.
  for (cudaStream_t before : {cudaStreamLegacy, cudaStreamPerThread}) {
    check_cuda(cudaEventRecord(default_streams_done_, before), [&] { return where(op); });
    check_cuda(cudaStreamWaitEvent(stream_, default_streams_done_, 0), [&] { return where(op); });
  }
}

void Communicator::abort(const std::string& reason, bool by_user) {
  {
    std::lock_guard lock(mutex_);
    if (!aborted_.empty()) return;
    aborted_ = reason;
    aborted_by_user_ = by_user;
  }
  // No NCCL call reaches comm_ any more (each checks aborted_ under the lock first), so the
  // abort runs unlocked: pollers on other threads see "aborted" at once instead of waiting.
  const auto bound = abort_wait(spec_.timeout);
  if (!abort_within(comm_, spec_.device, bound)) {
    std::lock_guard lock(mutex_);
    aborted_ += " (ncclCommAbort had not returned after " + std::to_string(bound.count()) +
                " ms and goes on in the background)";
  }
}

bool Communicator::aborted() const {
  std::lock_guard lock(mutex_);
  return !aborted_.empty();
}

}  // namespace dist::real
