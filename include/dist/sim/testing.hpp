// Test-framework integration for code that uses dist: run a GoogleTest body on N simulated ranks
// in one line (failures say which rank), and, when rapidcheck is available, generators of
// clusters and seeds for property tests. Header-only over dist::sim (link it).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <source_location>
#include <string>

#include "dist/api.hpp"
#include "dist/sim/run.hpp"

namespace dist::testing {

// Runs `body` on every rank of `cluster` from inside a GoogleTest test. Assertion failures in
// `body` carry "rank r of n"; if any rank throws (DesyncError, DeadlockError, or an exception of
// the code under test), the test fails with every rank's outcome and the settings that
// reproduce the run. Returns whether every rank returned normally.
inline bool run_ranks(const sim::Cluster& cluster, const std::function<void()>& body,
                      std::source_location where = std::source_location::current()) {
  try {
    sim::run(cluster, [&] {
      const ::testing::ScopedTrace trace(
          where.file_name(), static_cast<int>(where.line()),
          "rank " + std::to_string(get_rank()) + " of " + std::to_string(get_world_size()));
      body();
    });
    return true;
  } catch (const sim::RunError& e) {
    ADD_FAILURE_AT(where.file_name(), static_cast<int>(where.line())) << e.what();
    return false;
  }
}

// The same on one node of `ranks` ranks, in deterministic mode so a failure replays exactly.
inline bool run_ranks(int ranks, const std::function<void()>& body,
                      std::source_location where = std::source_location::current()) {
  sim::Cluster cluster;
  cluster.ranks_per_node = ranks;
  cluster.schedule = sim::Schedule::deterministic;
  return run_ranks(cluster, body, where);
}

}  // namespace dist::testing

#if __has_include(<rapidcheck.h>)
#include <rapidcheck.h>

namespace dist::testing::gen {

// A seed for Cluster.seed.
inline rc::Gen<std::uint64_t> seed() { return rc::gen::arbitrary<std::uint64_t>(); }

// Clusters of 1..max_nodes nodes of 1..max_ranks_per_node ranks, deterministic, with a random
// seed, so a failing case replays exactly (rapidcheck prints the cluster it shrank to).
inline rc::Gen<sim::Cluster> cluster(int max_nodes = 3, int max_ranks_per_node = 4) {
  return rc::gen::apply(
      [](int nodes, int per_node, std::uint64_t s) {
    sim::Cluster c;
    c.nodes = nodes;
    c.ranks_per_node = per_node;
    c.seed = s;
    c.schedule = sim::Schedule::deterministic;
    return c;
      },
      rc::gen::inRange(1, max_nodes + 1), rc::gen::inRange(1, max_ranks_per_node + 1), seed());
}

}  // namespace dist::testing::gen

namespace rc {
template <>
struct Arbitrary<dist::sim::Cluster> {
  static Gen<dist::sim::Cluster> arbitrary() { return dist::testing::gen::cluster(); }
};
}  // namespace rc

namespace dist::sim {
// Lets rapidcheck print a counterexample cluster.
inline void showValue(const Cluster& c, std::ostream& os) { os << to_string(c); }
}  // namespace dist::sim
#endif
