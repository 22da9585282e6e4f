// The implementer side of dist::Work: a WorkState per asynchronous operation. A backend's holds
// its engine's state only; the layers around a backend (the call layer, the ledger of Works not
// yet waited) wrap it in a WorkDecorator (core/work_decorator.hpp) holding theirs.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "dist/api.hpp"
#include "dist/errors.hpp"
#include "dist/export.hpp"

namespace dist::detail {

// The TimeoutError of Work::wait(timeout) when that timeout, the caller's own, passed before the
// operation's deadline: the operation has failed on this rank, and the call layer reports it at
// once, without the roll call of a collective that failed at the group's timeout.
class DIST_API WaitTimeout final : public TimeoutError {
 public:
  using TimeoutError::TimeoutError;
};

class DIST_API WorkState {
 public:
  virtual ~WorkState() = default;
  // Blocks until the operation completes or its deadline passes; rethrows its error.
  virtual void wait() = 0;
  // Whether it has completed (may make progress on the operation, never blocks).
  virtual bool is_completed() = 0;
  // wait() within `timeout` (or the backend's own, when shorter): TimeoutError otherwise. This
  // default polls is_completed(); a backend whose operations progress only inside wait()
  // overrides it.
  virtual void wait_for(std::chrono::milliseconds timeout);
  // The Work was handed to the user by an asynchronous call (detail::track_unwaited): a backend
  // that runs a call only once it is waited (gloo's blocking calls run on the waiting thread)
  // starts it now.
  virtual void start() {}
  // The user's Work was destroyed by an exception unwinding the stack that holds the operation's
  // buffers (dist::Work::~Work): a backend that may still touch them stops first. Never throws.
  virtual void abandon() noexcept {}
  // wait_for's error when `timeout` passed first: a WaitTimeout naming the operation.
  [[noreturn]] void wait_expired(std::chrono::milliseconds timeout) const;

  // The error wait() or is_completed() raised (Work::exception).
  std::exception_ptr failure;

  // A completed receive's sender (a group rank; Work::source): core sets `received_from` for a
  // recv from a given rank; a backend that receives from any_source overrides source().
  virtual int source() const { return received_from; }
  int received_from = -1;

  // The group backend a collective was called on, as the group's outermost backend (the call
  // layer, sim's) knows it: barrier() on that group completes the collective first
  // (core/barrier.cpp), as torch's barrier does. Compared, never dereferenced; null for p2p and
  // untracked calls.
  virtual const void* collective_of() const { return nullptr; }

  // The call, as errors name it ("" when unknown).
  virtual std::string describe() const { return {}; }
};

}  // namespace dist::detail

namespace dist::core {

// A Work for an operation that has already finished (successfully).
DIST_API Work completed_work();

// What dist::Work::wait and is_completed do with a Work's state: wait (within `timeout`), and keep
// the error for Work::exception.
DIST_API void wait_work(detail::WorkState& state, std::optional<std::chrono::milliseconds> timeout);
DIST_API bool poll_work(detail::WorkState& state);

}  // namespace dist::core
