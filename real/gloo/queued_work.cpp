// QueuedWork and GlooGiveUp (queued_work.hpp).
#include "real/gloo/queued_work.hpp"

#include <gloo/context.h>

#include "core/store/given_up.hpp"
#include "dist/errors.hpp"

namespace dist::real {

void GlooGiveUp::operator()(CallQueue::Call& call, const std::string& why) const {
  queue_->close(std::make_exception_ptr(
      BackendError("the gloo " + group_ + " is unusable: its " + call.name + " #" +
                   std::to_string(call.index) + " was given up on this rank (" + why +
                   "; gloo cannot cancel a call); create a new process "
                   "group")));
  if (store_) core::record_given_up(*store_, prefix_, call.index, me_);
  disconnect();
}

void GlooGiveUp::abort(const std::exception_ptr& why) const {
  queue_->close(why);
  queue_->release_waits();
  disconnect();
}

void GlooGiveUp::disconnect() const {
  context_->closeConnections();
  std::lock_guard fence(fence_->mutex);  // after a running reduction step
  fence_->closed = true;
}

void GlooGiveUp::unless_given_up(const std::function<void()>& write) const {
  std::lock_guard lock(fence_->mutex);
  if (!fence_->closed) write();
}

std::function<void(void*, const void*, const void*, std::size_t)> GlooGiveUp::fenced(
    core::ReduceStep step) const {
  return [fence = fence_, step](void* out, const void* a, const void* b, std::size_t n) {
    std::lock_guard lock(fence->mutex);
    if (!fence->closed) step(out, a, b, n);
  };
}

void GlooGiveUp::throw_if_given_up(const std::string& where, std::uint64_t index) const {
  if (!store_) return;
  const int by = core::given_up_by(*store_, prefix_, index);
  if (by < 0 || by == me_) return;
  const std::string reason =
      core::given_up_reason(by, "gloo cannot cancel a call, so it closed its connections");
  queue_->close(std::make_exception_ptr(BackendError("the gloo " + group_ + ": " + reason)));
  throw BackendError(where + " failed: " + reason);
}

// After a wait: the call's error, or the group's abort when the call had not ended (an aborted
// group's running call stays inside gloo until its timeout; its Work ends at once) or failed as
// its connections closed.
void QueuedWork::rethrow() const {
  const bool done = queue_->is_done(*call_);
  if (done && !call_->error) return;
  if (const auto why = queue_->closed(); why && holds_error<Aborted>(why))
    std::rethrow_exception(why);
  if (call_->error) std::rethrow_exception(call_->error);
}

void QueuedWork::wait() {
  queue_->finish(*call_);
  rethrow();
}

bool QueuedWork::is_completed() {
  queue_->launch(*call_);
  if (!queue_->is_done(*call_)) {
    if (queue_->released()) rethrow();
    return false;
  }
  rethrow();
  return true;
}

void QueuedWork::wait_for(std::chrono::milliseconds timeout) {
  if (!queue_->finish_by(*call_, CallQueue::Clock::now() + timeout)) {  // (an abort: true)
    (*give_up_)(*call_, "Work::wait's timeout of " + std::to_string(timeout.count()) + " ms");
    wait_expired(timeout);
  }
  rethrow();
}

void QueuedWork::abandon() noexcept {
  try {
    if (!queue_->is_done(*call_))
      (*give_up_)(*call_, "its Work was destroyed by an exception before the call ended");
  } catch (...) {  // never throws: the call has ended or the connections are closed
  }
}

}  // namespace dist::real
