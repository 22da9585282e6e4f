// CallQueue: the front call runs on whichever thread claims it first, the worker (when the call
// was launched) or a thread waiting for it (finish); everything else waits on `changed_`.
#include "real/gloo/call_queue.hpp"

#include <utility>

namespace dist::real {

CallQueue::~CallQueue() {
  // Only calls never launched can be left (no worker holds the queue): they run here.
  std::unique_lock lock(mutex_);
  while (!calls_.empty()) run(lock, *calls_.front());
}

void CallQueue::drain() {
  std::unique_lock lock(mutex_);
  for (auto& c : calls_) c->launched = true;
  if (!calls_.empty() && !worker_) start_worker();
  changed_.notify_all();
  changed_.wait(lock, [&] {
    return calls_.empty() ||
           (closed_ && calls_.size() == 1 && calls_.front()->stage == Call::Stage::running);
  });
  stopping_ = true;
  changed_.notify_all();
}

std::shared_ptr<CallQueue::Call> CallQueue::push(std::uint64_t index, std::string name,
                                                 std::function<void()> body) {
  auto call = std::make_shared<Call>();
  call->index = index;
  call->name = std::move(name);
  call->body = std::move(body);
  std::unique_lock lock(mutex_);
  if (runner_ == std::this_thread::get_id()) {  // inside the group's running call
    lock.unlock();
    try {
      call->body();
    } catch (...) {
      call->error = std::current_exception();
    }
    call->stage = Call::Stage::done;
    return call;
  }
  if (closed_) {
    fail(*call, closed_);
    return call;
  }
  if (!calls_.empty() && !calls_.back()->launched) launch_locked(*calls_.back());
  calls_.push_back(call);
  return call;
}

void CallQueue::launch(Call& call) {
  std::lock_guard lock(mutex_);
  if (!call.launched && call.stage == Call::Stage::queued) launch_locked(call);
}

void CallQueue::launch_locked(Call& call) {
  call.launched = true;
  if (!worker_) start_worker();
  changed_.notify_all();
}

void CallQueue::finish(Call& call) {
  std::unique_lock lock(mutex_);
  while (call.stage != Call::Stage::done && !released_) {
    if (call.stage == Call::Stage::queued && calls_.front().get() == &call) {
      run(lock, call);
      return;
    }
    changed_.wait(lock);
  }
}

bool CallQueue::finish_by(Call& call, Clock::time_point deadline) {
  launch(call);
  std::unique_lock lock(mutex_);
  return changed_.wait_until(lock, deadline,
                             [&] { return call.stage == Call::Stage::done || released_; });
}

void CallQueue::release_waits() {
  std::lock_guard lock(mutex_);
  released_ = true;
  changed_.notify_all();
}

bool CallQueue::released() {
  std::lock_guard lock(mutex_);
  return released_;
}

bool CallQueue::is_done(Call& call) {
  std::lock_guard lock(mutex_);
  return call.stage == Call::Stage::done;
}

void CallQueue::close(std::exception_ptr why) {
  std::lock_guard lock(mutex_);
  if (!closed_) closed_ = why;
  for (auto it = calls_.begin(); it != calls_.end();) {
    if ((*it)->stage == Call::Stage::queued) {
      fail(**it, closed_);
      it = calls_.erase(it);
    } else {
      ++it;
    }
  }
  changed_.notify_all();
}

std::exception_ptr CallQueue::closed() {
  std::lock_guard lock(mutex_);
  return closed_;
}

void CallQueue::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    const auto runnable = [&] {
      return !calls_.empty() && calls_.front()->launched &&
             calls_.front()->stage == Call::Stage::queued;
    };
    changed_.wait(lock, [&] { return stopping_ || runnable(); });
    if (!runnable()) return;  // drained
    run(lock, *calls_.front());
  }
}

void CallQueue::run(std::unique_lock<std::mutex>& lock, Call& call) {
  call.stage = Call::Stage::running;
  runner_ = std::this_thread::get_id();
  lock.unlock();
  std::exception_ptr error;
  try {
    call.body();
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  runner_ = {};
  call.error = error;
  call.stage = Call::Stage::done;
  call.body = nullptr;  // what it captured goes now
  calls_.pop_front();
  changed_.notify_all();
}

void CallQueue::fail(Call& call, std::exception_ptr why) {
  call.error = std::move(why);
  call.stage = Call::Stage::done;
  call.body = nullptr;
}

void CallQueue::start_worker() {
  worker_ = true;
  std::thread([self = shared_from_this()] { self->work(); }).detach();
}

}  // namespace dist::real
