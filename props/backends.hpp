// The backends the property suite runs against. Each is a type with a name, its capabilities and
// run(shape, fn): fn on every rank, the per-rank results in rank order, or a RunFailure naming
// every rank's outcome. The real backends come from real/registry (what they need, why they
// cannot run here); a new one is a line in AllBackends.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdlib>
#include <exception>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dist/errors.hpp"
#include "dist/sim/run.hpp"
#include "dist/types.hpp"
#ifdef DIST_PROPS_WITH_GLOO
#include <rapidcheck.h>

#include "real/registry.hpp"
#include "real/testing.hpp"
#endif

namespace props {

// A cluster: `nodes` machines of `ranks_per_node` ranks each, numbered node by node.
struct WorldShape {
  int nodes = 1;
  int ranks_per_node = 1;
  int size() const { return nodes * ranks_per_node; }
  friend bool operator==(const WorldShape&, const WorldShape&) = default;
  friend std::ostream& operator<<(std::ostream& os, const WorldShape& s) {
    return os << s.nodes << " node(s) x " << s.ranks_per_node << " rank(s)";
  }
};

// How one rank of a failed run ended, independent of the backend.
struct RankOutcome {
  bool ok = true;
  std::optional<dist::ErrorCode> code;  // set when the rank threw a dist::Error
  int failed_rank = -1;                 // RankFailure: the peer that failed
  std::string message;
};

// A run in which at least one rank failed.
class RunFailure : public std::runtime_error {
 public:
  RunFailure(const std::string& what, std::vector<RankOutcome> outcomes)
      : std::runtime_error(what), outcomes_(std::move(outcomes)) {}
  const std::vector<RankOutcome>& outcomes() const { return outcomes_; }
  const RankOutcome& at(int rank) const { return outcomes_.at(static_cast<std::size_t>(rank)); }

 private:
  std::vector<RankOutcome> outcomes_;
};

// What the suite may expect of a backend.
struct Capabilities {
  dist::Backend backend = dist::Backend::sim;
  // Arbitrary float inputs (NaN, -0, infinities, order-dependent sums) compare bit for bit with
  // the reference. Without it, float inputs are chosen so every summation order is exact.
  bool bitwise_floats = false;
  // Mismatched collectives end in DesyncError/DeadlockError (sim; real backends with
  // DIST_DEBUG=detail report desyncs, and deadlocks only as timeouts).
  bool reports_mismatches = false;
  // How long a run that must fail may take to do so.
  std::chrono::milliseconds failure_deadline{10'000};
  // The share of each property's case budget this backend runs (real backends spend most of a
  // case connecting, so they run fewer cases in the same time).
  int case_percent = 100;
  // Why p2p "posted all at once" (every irecv before any isend, tags deciding the match) cannot
  // run on this backend; empty where it can. The p2p property then posts blocking calls only.
  std::string_view no_posted_p2p{};
};

// The case_percent of the backend whose suite is running (100 outside a backend suite).
inline int& current_case_percent() {
  static int percent = 100;
  return percent;
}

// The most ranks the running suite's backend runs here (its max_ranks(): a GPU or a process per
// rank), which bounds the worlds the generators draw; no bound outside such a suite. Drawing
// larger worlds and discarding them made rapidcheck give up where one rank can run (nccl on one
// GPU, a one-process launch): ten discards per case allowed.
constexpr int unbounded_ranks = 1 << 20;
inline int& current_max_ranks() {
  static int most = unbounded_ranks;
  return most;
}
template <class B>
int max_ranks_of() {
  if constexpr (requires { B::max_ranks(); }) return std::max(1, B::max_ranks());
  return unbounded_ranks;
}

template <class B>
concept BackendUnderTest = requires(const WorldShape& shape) {
  { B::name() } -> std::convertible_to<std::string>;
  { B::capabilities } -> std::convertible_to<Capabilities>;
  {
    B::run(shape, [] { return 0; })
    } -> std::same_as<std::vector<int>>;
};

namespace detail {
// The backend-neutral outcome of one rank's exception (or of a normal return).
inline RankOutcome outcome_of(const std::exception_ptr& error, const std::string& message) {
  RankOutcome o{.ok = !error, .code = std::nullopt, .failed_rank = -1, .message = message};
  if (!error) return o;
  try {
    std::rethrow_exception(error);
  } catch (const dist::RankFailure& e) {
    o.code = e.code();
    o.failed_rank = e.failed_rank();
  } catch (const dist::Error& e) {
    o.code = e.code();
  } catch (...) {
  }
  return o;
}
}  // namespace detail

// The simulated cluster: one thread per rank in this process.
struct SimBackend {
  static std::string name() { return "sim"; }
  static constexpr Capabilities capabilities{.backend = dist::Backend::sim,
                                             .bitwise_floats = true,
                                             .reports_mismatches = true,
                                             .failure_deadline = std::chrono::seconds(10)};

  template <class F>
  static auto run(const WorldShape& shape, F&& fn) {
    const dist::sim::Cluster cluster{.nodes = shape.nodes,
                                     .ranks_per_node = shape.ranks_per_node,
                                     .timeout = std::chrono::seconds(30)};
    try {
      return dist::sim::run(cluster, std::forward<F>(fn));
    } catch (const dist::sim::RunError& e) {
      std::vector<RankOutcome> outcomes;
      for (const auto& o : e.outcomes()) outcomes.push_back(detail::outcome_of(o.error, o.message));
      throw RunFailure(e.what(), std::move(outcomes));
    }
  }
};
static_assert(BackendUnderTest<SimBackend>);

#ifdef DIST_PROPS_WITH_GLOO
namespace detail {
// fn on every rank of a `backend` world of ranks as threads in this process
// (real::run_thread_world), multi-node shapes with their local groups as init_dist would make them.
template <class F>
auto run_real_ranks(dist::Backend backend, std::string_view name, const WorldShape& shape, F&& fn) {
  using R = decltype(fn());
  std::vector<std::optional<R>> results(static_cast<std::size_t>(shape.size()));
  const auto errors = dist::real::run_thread_world(
      backend, shape.size(), std::chrono::seconds(30),
      [&](int rank) { results[static_cast<std::size_t>(rank)].emplace(fn()); },
      shape.ranks_per_node);
  std::vector<RankOutcome> outcomes;
  std::string what = std::string(name) + " run on " + std::to_string(shape.size()) + " ranks failed:";
  bool failed = false;
  for (std::size_t r = 0; r < errors.size(); ++r) {
    std::string message;
    if (errors[r]) {
      failed = true;
      try {
        std::rethrow_exception(errors[r]);
      } catch (const std::exception& e) {
        message = e.what();
      } catch (...) {
        message = "a non-standard exception";
      }
      what += "\n  rank " + std::to_string(r) + ": " + message;
    }
    outcomes.push_back(outcome_of(errors[r], message));
  }
  if (failed) throw RunFailure(what, std::move(outcomes));
  std::vector<R> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}
// Discards a case on more ranks than `backend` can run in this process (nccl: one per GPU).
inline void discard_beyond_limit(dist::Backend backend, const std::string& name, int ranks) {
  if (std::string why = dist::real::backend_entry(backend, "props").unavailable(ranks);
      !why.empty())
    RC_DISCARD(name + ": " + why);
}
// The most ranks (up to 8) `backend` can run in this process.
inline int max_ranks_here(dist::Backend backend) {
  const auto& entry = dist::real::backend_entry(backend, "props");
  int n = 8;
  while (n > 0 && !entry.unavailable(n).empty()) --n;
  return n;
}
// Every real backend's props, written once: the share of the case budget it runs (real backends
// spend most of a case connecting) and how long a run that must fail may take. nccl's are the
// slowest to connect and to abort.
constexpr Capabilities real_capabilities(dist::Backend backend, int case_percent) {
  const bool slow = backend == dist::Backend::nccl;
  return {.backend = backend,
          .bitwise_floats = false,
          .reports_mismatches = false,
          .failure_deadline = std::chrono::seconds(slow ? 60 : 30),
          .case_percent = slow ? 10 : case_percent,
          .no_posted_p2p = backend != dist::Backend::nccl
                               ? ""
                               : "nccl has no tags and runs a communicator's calls in issue order "
                                 "on one stream, so a receive posted before the send it waits "
                                 "for deadlocks (each isend/irecv is its own NCCL call, not "
                                 "batched in one ncclGroupStart/End)"};
}
}  // namespace detail

// A real backend whose ranks are threads of this process, meeting through an in-memory store
// (gloo over TCP loopback; nccl with rank r on GPU r, host data staged through device memory);
// multi-node shapes get their local groups as init_dist would make them. The suite skips, saying
// why, where the backend cannot run; cases on more ranks than it can run here are discarded.
template <dist::Backend K>
struct ThreadBackend {
  static std::string name() { return std::string(dist::to_string(K)); }
  static constexpr Capabilities capabilities = detail::real_capabilities(K, 20);
  static std::string unavailable() {
    const auto& entry = dist::real::backend_entry(K, "props");
    if (!entry.threads) return "its ranks are processes, not threads (see " + name() + "_procs)";
    return entry.unavailable(1);
  }
  static int max_ranks() { return detail::max_ranks_here(K); }

  template <class F>
  static auto run(const WorldShape& shape, F&& fn) {
    detail::discard_beyond_limit(K, name(), shape.size());
    return detail::run_real_ranks(K, name(), shape, std::forward<F>(fn));
  }
};
static_assert(BackendUnderTest<ThreadBackend<dist::Backend::gloo>>);
#endif

// Every backend the suite is instantiated for (one entry per backend).
#ifdef DIST_PROPS_WITH_GLOO
// props/process_backend.hpp: one process per rank (distrun), on gloo and on nccl; under
// mpirun, on mpi.
template <dist::Backend K>
struct ProcessBackend;
using GlooProcessBackend = ProcessBackend<dist::Backend::gloo>;
using NcclProcessBackend = ProcessBackend<dist::Backend::nccl>;
using MpiProcessBackend = ProcessBackend<dist::Backend::mpi>;
using GlooBackend = ThreadBackend<dist::Backend::gloo>;
using NcclBackend = ThreadBackend<dist::Backend::nccl>;
using AllBackends = ::testing::Types<SimBackend, GlooBackend, GlooProcessBackend, NcclBackend,
                                     NcclProcessBackend, MpiProcessBackend>;
#else
using AllBackends = ::testing::Types<SimBackend>;
#endif

// Whether DIST_PROPS_BACKENDS (a comma-separated list of names, e.g. "sim,gloo") selects the
// backend; unset or empty selects every backend.
inline bool selected(std::string_view name) {
  const char* list = std::getenv("DIST_PROPS_BACKENDS");
  if (!list || !*list) return true;
  std::string_view rest(list);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    if (rest.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

// Why backend B cannot run here ("" when it can): B::unavailable() where B has one.
template <class B>
std::string unavailable_reason() {
  if constexpr (requires { B::unavailable(); }) return B::unavailable();
  return "";
}

// Why a property needing at least `ranks` ranks cannot run on B here ("" when it can): B's
// max_ranks() (a GPU per rank for nccl, a process per rank for the *_procs), where B has one,
// is below it.
template <class B>
std::string too_few_ranks(int ranks) {
  if constexpr (requires { B::max_ranks(); }) {
    if (B::max_ranks() < ranks)
      return B::name() + " runs at most " + std::to_string(B::max_ranks()) +
             " rank(s) here (one per GPU or process); this property needs " + std::to_string(ranks);
  }
  return "";
}

// In a test body: skips the test when backend B cannot run `ranks` ranks here.
#define PROPS_SKIP_BELOW_RANKS(B, ranks)                                          \
  if (const std::string why_ = ::props::too_few_ranks<B>(ranks); !why_.empty()) \
  GTEST_SKIP() << why_

// Names each typed suite instance after its backend: ctest shows "Collectives/gloo.AllReduce".
struct BackendNames {
  template <class B>
  static std::string GetName(int) {
    return B::name();
  }
};

// The fixture of every per-backend suite: TYPED_TEST_SUITE(Suite, AllBackends, BackendNames) with
// `template <class B> class Suite : public BackendSuite<B> {};`. ctest names the tests
// "Suite/sim.Property".
template <class B>
class BackendSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!selected(B::name())) GTEST_SKIP() << B::name() << " is not in DIST_PROPS_BACKENDS";
    if (const std::string why = unavailable_reason<B>(); !why.empty())
      GTEST_SKIP() << B::name() << " cannot run here: " << why;
    current_case_percent() = B::capabilities.case_percent;
    current_max_ranks() = max_ranks_of<B>();
  }
  void TearDown() override {
    current_case_percent() = 100;
    current_max_ranks() = unbounded_ranks;
  }
};

}  // namespace props

#ifdef DIST_PROPS_WITH_GLOO
#include "props/process_backend.hpp"  // needs everything above
#endif
