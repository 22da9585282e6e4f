// The registry of the rank contexts of the sim runs in progress, behind dist::sim::current_rank
// and ScopedRank (a binding taken in a run that has ended is refused, not dereferenced).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/context.hpp"

namespace dist::sim {

// Registers a run's rank contexts for its lifetime, and counts it as a run in progress for
// core's helper-thread check.
class LiveRun {
 public:
  explicit LiveRun(const std::vector<std::unique_ptr<core::Context>>& contexts);
  ~LiveRun();
  LiveRun(const LiveRun&) = delete;
  LiveRun& operator=(const LiveRun&) = delete;

 private:
  core::SimRunScope scope_;
  std::uint64_t id_;
  std::vector<const core::Context*> contexts_;
};

}  // namespace dist::sim
