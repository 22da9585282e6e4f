// The simulated cluster (link dist::sim): dist::sim::run runs a function once on each rank of an
// in-process cluster (a thread per rank, or fibers on one thread in deterministic mode), with the
// dist:: context of the thread or fiber bound to its rank.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "dist/errors.hpp"
#include "dist/export.hpp"
#include "dist/sim/network.hpp"

namespace dist::sim {

// How rank threads interleave. `concurrent` (the fast default) lets the OS run every rank at
// once. `deterministic` runs one rank at a time between communication points, choosing the next
// from Cluster.seed, so a seed replays the same interleaving (and the same trace) exactly; its
// clock is virtual, so delays and timeouts cost no real time.
enum class Schedule { concurrent, deterministic };

// A fault injected into a run. `at_call` counts the rank's communication calls (collectives,
// barrier, new_group, send and recv), from 1. run() rejects (InvalidArgument) a fault whose rank
// is not in the world, whose at_call is below 1, or whose delay is negative.
struct Fault {
  enum class Kind : std::uint8_t {
    kill,   // the rank throws RankFailure at that call (its peers get RankFailure naming it)
    stall,  // the rank stalls for `delay` before making that call
    fail,   // that collective fails with BackendError(message) on every participant
    // the rank's process is killed at that call, as `kill` (its peers get RankFailure naming
    // it), and after `delay` its function starts again as a replacement: dist::restart_count()
    // one higher, its world group replaced (calls on it raise Aborted) until dist::reconfigure
    // lets it in. Its calls go on counting from the killed process's (at_call counts across a
    // rank's processes). The run's outcome for the rank is its last process's.
    restart,
  };
  Kind kind = Kind::kill;
  int rank = 0;
  int at_call = 1;
  std::chrono::milliseconds delay{0};
  std::string message{};

  static Fault kill(int rank, int at_call) { return {Kind::kill, rank, at_call, {}, {}}; }
  static Fault stall(int rank, int at_call, std::chrono::milliseconds delay) {
    return {Kind::stall, rank, at_call, delay, {}};
  }
  static Fault fail(int rank, int at_call, std::string message = "injected failure") {
    return {Kind::fail, rank, at_call, {}, std::move(message)};
  }
  static Fault restart(int rank, int at_call, std::chrono::milliseconds delay) {
    return {Kind::restart, rank, at_call, delay, {}};
  }
};

// The shape and settings of a simulated cluster. World size = nodes × ranks_per_node; ranks
// are numbered node by node, and each node is one local group.
struct Cluster {
  int nodes = 1;
  int ranks_per_node = 2;
  // How long a rank may wait in a collective for ranks that are busy outside the fabric.
  // (A wait that can never be satisfied is a DeadlockError at once, whatever the timeout, except
  // Work::wait(timeout), which raises TimeoutError at its own timeout.)
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  // Seeds each rank's random stream (see rank_rng) and the deterministic scheduler.
  std::uint64_t seed = 0;
  Schedule schedule = Schedule::concurrent;
  std::vector<Fault> faults{};
  // When set, every collective and p2p call is written to this file as Chrome-trace JSON (open it
  // in Perfetto or chrome://tracing), also when the run fails.
  std::string trace{};
  // The ranks whose calls the trace keeps (empty: every rank), so the trace of a large world
  // stays small enough to open in Perfetto; each must be a rank of the world.
  std::vector<int> trace_ranks{};
  // Deterministic mode runs every rank as a fiber (Boost.Context) of one OS thread, switched at
  // communication points, so a world is bounded by memory rather than by the OS's thread limits
  // (docs/benchmarks.md: sim at scale). false runs them as threads, one at a time, as
  // concurrent mode does without the schedule: needed only when a rank blocks its thread on
  // another thread that acts as that rank (a ScopedRank helper it joins).
  bool fibers = true;
  // Stack size of each rank in bytes. 0: 256 KiB for a fiber (with a guard page below it while
  // vm.max_map_count allows, else a canary checked at every switch), the system default for a
  // thread. Only the pages a rank touches take memory.
  std::size_t stack_size = 0;
  // Whether an isend's buffer is checksummed at the call and at its wait, so a buffer changed
  // before wait() returns is an InvalidArgument naming the call (costs two reads of the buffer).
  bool check_send_buffers = true;
  // When set, the run predicts its time on this network (deterministic schedule only): every
  // call advances its ranks' clocks by the model's time, the trace's timestamps are the predicted
  // ones, and run(cluster, fn, prediction) reports them (<dist/predict.hpp>).
  std::optional<Network> network{};

  // The largest world run() accepts, 262,144 ranks unless set (the largest clusters' size; the
  // scale program runs there in about 11 s and 2 GiB here: docs/testing.md); a larger one, or a
  // shape whose product overflows int, is InvalidArgument before anything is allocated. Raise it
  // for a larger world: one that cannot fit in this process's memory is still refused before any
  // rank starts. (Threads, in concurrent mode, stop earlier at the OS's limits: pid_max,
  // vm.max_map_count, memory.)
  static constexpr int default_max_world_size = 1 << 18;
  int max_world_size = default_max_world_size;

  // nodes x ranks_per_node, saturated to int's range: a shape that overflows reads as INT_MAX
  // (or INT_MIN), never as a small wrapped number.
  int world_size() const {
    const long long n = static_cast<long long>(nodes) * ranks_per_node;
    return static_cast<int>(
        std::clamp<long long>(n, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
  }
};

DIST_API std::string to_string(const Cluster& cluster);

// What happened on one rank of a run.
struct Outcome {
  int rank = 0;
  std::exception_ptr error;  // null when the rank returned normally
  std::string message;       // the error's what(), or "ok"
  bool ok() const { return !error; }
};

// Raised by run() when at least one rank failed; the message names every rank's outcome.
class DIST_API RunError : public Error {
 public:
  RunError(ErrorCode code, const std::string& message, std::vector<Outcome> outcomes)
      : Error(code, message), outcomes_(std::move(outcomes)) {}
  const std::vector<Outcome>& outcomes() const noexcept { return outcomes_; }
  // Whether rank r failed with an exception of type E.
  template <class E>
  bool failed_with(int rank) const {
    return holds_error<E>(outcomes_.at(static_cast<std::size_t>(rank)).error);
  }

 private:
  std::vector<Outcome> outcomes_;
};

// The calling rank's random stream: seeded from Cluster.seed and the rank, so a seeded cluster
// draws the same numbers on every run. Outside a sim run it is a per-thread stream seeded by the
// OS.
DIST_API std::mt19937_64& rank_rng();

// Helper threads. dist:: calls act for the calling thread's rank, and a thread a rank starts is
// not that rank: while a run is in progress, a dist:: call (query or collective) from such a
// thread raises NotInitialized. To let a helper act as its rank, capture the rank on the rank's
// thread and hold a ScopedRank on the helper:
//   const auto rank = dist::sim::current_rank();
//   std::thread helper([&, rank] { dist::sim::ScopedRank scope(rank); dist::all_reduce(v); });
//   helper.join();
// The helper's calls are the rank's calls (they count in its call sequence and its faults), so
// one thread at a time should make them, and the helper must finish before the rank's fn returns.
class RankBinding {
 public:
  int rank() const noexcept { return rank_; }

 private:
  friend struct RankBindingAccess;
  void* context_ = nullptr;
  std::uint64_t run_ = 0;
  int rank_ = -1;
};

// The calling rank thread's binding; InvalidArgument on a thread that is not a rank of a run.
DIST_API RankBinding current_rank();

// Binds the calling thread to a rank for the scope's lifetime; InvalidArgument when the binding's
// run has ended. Scopes nest, and the previous binding (usually none) comes back at the end.
class DIST_API ScopedRank {
 public:
  explicit ScopedRank(const RankBinding& binding);
  ~ScopedRank();
  ScopedRank(const ScopedRank&) = delete;
  ScopedRank& operator=(const ScopedRank&) = delete;

 private:
  void* previous_;
};

namespace detail {
// InvalidArgument when the cluster's shape, timeout or faults are not valid.
DIST_API void check_cluster(const Cluster& cluster);
// Runs body(rank) on every rank's thread; throws RunError naming each rank when any failed.
DIST_API void run_rank_threads(const Cluster& cluster, const std::function<void(int)>& body);

// Has `runs` (given a body of the rank number, it runs it on every rank) run fn() on every rank,
// and returns fn's results in rank order (nothing for a void fn): what each form of run() shares.
template <class F, class Runs>
auto run_collecting(const Cluster& cluster, F& fn, Runs&& runs) {
  using R = std::invoke_result_t<F&>;
  if constexpr (std::is_void_v<R>) {
    runs([&](int) { fn(); });
  } else {
    check_cluster(cluster);  // before the slots are allocated
    std::vector<std::optional<R>> slots(static_cast<std::size_t>(cluster.world_size()));
    runs([&](int rank) { slots[static_cast<std::size_t>(rank)].emplace(fn()); });
    std::vector<R> results;
    results.reserve(slots.size());
    for (auto& s : slots) results.push_back(std::move(*s));
    return results;
  }
}
}  // namespace detail

// Runs fn() on every rank and returns the per-rank results in rank order (nothing for void fn).
template <class F>
auto run(const Cluster& cluster, F&& fn) {
  return detail::run_collecting(cluster, fn, [&](const std::function<void(int)>& body) {
    detail::run_rank_threads(cluster, body);
  });
}

}  // namespace dist::sim
