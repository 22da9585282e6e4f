// dist::Work: forwards to its WorkState (the layers around a backend wrap the backend's: the call
// layer's record, the ledger of Works not yet waited); a default Work is complete.
#include <algorithm>
#include <string>
#include <thread>

#include "core/work_state.hpp"
#include "dist/errors.hpp"

namespace dist {

Work::~Work() {
  if (!state_ || std::uncaught_exceptions() <= unwinding_) return;
  state_->abandon();
}

void Work::wait() {
  if (state_) core::wait_work(*state_, std::nullopt);
}

void Work::wait(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0)
    throw InvalidArgument("Work::wait: the timeout must not be negative, got " +
                          std::to_string(timeout.count()) + " ms");
  if (state_) core::wait_work(*state_, timeout);
}

bool Work::is_completed() const { return !state_ || core::poll_work(*state_); }

std::exception_ptr Work::exception() const {
  if (!state_) return nullptr;
  if (!state_->failure) {
    try {
      state_->is_completed();
    } catch (...) {
      state_->failure = std::current_exception();
    }
  }
  return state_->failure;
}

int Work::source() const {
  if (!state_ || state_->failure) return -1;
  try {
    if (!state_->is_completed()) return -1;
  } catch (...) {
    state_->failure = std::current_exception();
    return -1;
  }
  return state_->source();
}

}  // namespace dist

namespace dist::detail {

void WorkState::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(50);
  while (!is_completed()) {
    if (std::chrono::steady_clock::now() >= deadline) wait_expired(timeout);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
  wait();  // completed: its error, if any
}

void WorkState::wait_expired(std::chrono::milliseconds timeout) const {
  throw WaitTimeout((describe().empty() ? std::string("the operation") : describe()) +
                    " did not complete within " + std::to_string(timeout.count()) +
                    " ms (Work::wait with a timeout)");
}

}  // namespace dist::detail

namespace dist::core {

Work completed_work() { return Work{}; }

void wait_work(detail::WorkState& state, std::optional<std::chrono::milliseconds> timeout) {
  try {
    if (timeout) state.wait_for(*timeout);
    else state.wait();
  } catch (...) {
    state.failure = std::current_exception();
    throw;
  }
}

bool poll_work(detail::WorkState& state) {
  bool done = false;
  try {
    done = state.is_completed();
  } catch (...) {
    state.failure = std::current_exception();
    throw;
  }
  return done;
}

}  // namespace dist::core
