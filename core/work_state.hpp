// The implementer side of dist::Work: a WorkState per asynchronous operation, and the two
// trivial states every backend needs (already done, failed before it started).
#pragma once

#include <exception>

#include "dist/api.hpp"
#include "dist/export.hpp"

namespace dist::detail {

class WorkState {
 public:
  virtual ~WorkState() = default;
  // Blocks until the operation completes or its deadline passes; rethrows its error.
  virtual void wait() = 0;
  // Whether it has completed (may make progress on the operation, never blocks).
  virtual bool is_completed() = 0;
};

}  // namespace dist::detail

namespace dist::core {

// A Work for an operation that has already finished (successfully).
DIST_API Work completed_work();

}  // namespace dist::core
