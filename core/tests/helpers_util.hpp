// Shared test utilities of helpers_tests: sim worlds, and running a body that must fail.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "dist/sim/run.hpp"

namespace helpers_test {

inline dist::sim::Cluster world(int n) { return {.nodes = 1, .ranks_per_node = n}; }

// Runs fn on a cluster, expects it to fail, and returns the RunError.
template <class F> dist::sim::RunError expect_failure(const dist::sim::Cluster& cluster, F fn) {
  try {
    dist::sim::run(cluster, fn);
  } catch (const dist::sim::RunError& e) {
    return e;
  }
  ADD_FAILURE() << "the run did not fail";
  return dist::sim::RunError(dist::ErrorCode::backend, "none", {});
}

inline std::string message_of(const dist::sim::RunError& e, int rank) {
  return e.outcomes().at(static_cast<std::size_t>(rank)).message;
}

}  // namespace helpers_test
