// The distributed context of a rank: its backend, world and local groups. A sim rank thread binds
// its context thread-locally; init_dist sets a process-wide one. No context = not distributed.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/backend_impl.hpp"
#include "core/work_ledger.hpp"
#include "dist/api.hpp"

namespace dist::detail {

struct GroupState {
  // Global ranks, in group-rank order; shared by every rank's state of the group where they live
  // in one process (a sim world), so a world's list is held once, not once per rank.
  std::shared_ptr<const std::vector<int>> ranks;
  std::optional<dist::Backend> kind;       // new_group's backend option (empty: the world's)
  int rank = -1;                           // the owner's group rank; -1 when not a member
  std::shared_ptr<core::BackendImpl> backend;  // null when not a member
  const void* owner = nullptr;             // the Context this group belongs to
  // Set by destroy_dist, which also drops the backend: a Group kept past it is refused, not used.
  std::atomic<bool> destroyed{false};
  // Set by dist::abort (core/fault_tolerance.cpp): every later call on the group raises Aborted
  // with aborted_text ("the group {0, 1} was aborted on rank 1 by dist::abort"), written once,
  // before the flag.
  std::atomic<bool> aborted{false};
  std::string aborted_text;
  std::once_flag abort_once;
};

}  // namespace dist::detail

namespace dist::core {

// What dist::reconfigure's agreement gave a rank (Context::rejoin): the membership's epoch and
// members (global ranks, ascending), and the rank's backend of its group.
struct Rejoined {
  std::int64_t epoch = 0;
  std::vector<int> members;
  std::shared_ptr<BackendImpl> backend;
};

struct Context {
  dist::Backend kind = dist::Backend::sim;
  int rank = 0;
  int world_size = 1;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  std::shared_ptr<detail::GroupState> world;
  std::shared_ptr<detail::GroupState> local;  // null until a local group exists
  // This rank's random stream, made from rng_seed on its first use (random_engine): 2.5 KiB of
  // state a rank that never draws does not pay for (sim: the cluster's seed and the rank).
  std::array<std::uint32_t, 3> rng_seed{};
  std::unique_ptr<std::mt19937_64> rng;
  // dist::comm state (detectron2's module globals, per rank): the group object gathers use
  // (null: the world), and the argument create_local_process_group was called with (0: never).
  std::shared_ptr<detail::GroupState> object_group;
  int comm_local_workers = 0;
  // Every group made for this context (make_group_state), oldest first: kept until destroy_dist
  // closes their backends, newest first, whether or not a user still holds a Group (torch keeps a
  // group until destroy_process_group: a rank that drops its handle must not close connections a
  // peer still uses in a call on the group).
  mutable std::mutex groups_mutex;
  mutable std::vector<std::shared_ptr<detail::GroupState>> groups;
  // The Works handed to the user and not yet waited (work_ledger.hpp), and whether an isend's
  // buffer is checksummed at the call and at its wait.
  std::shared_ptr<WorkLedger> works = std::make_shared<WorkLedger>();
  bool check_send_buffers = false;
  // new_group with GroupOptions: this rank's backend of the group (null when not a member), made
  // on every rank of the world in the same order. Null: the world cannot honour options.
  std::function<std::shared_ptr<BackendImpl>(BackendImpl& world, const std::vector<int>& ranks,
                                             const GroupOptions& options)>
      make_group;
  // Elastic membership (dist::reconfigure, core/reconfigure.cpp): how many times this rank's
  // process was restarted (dist::restart_count), the epoch of the membership it belongs to (-1:
  // none yet, a replacement that has not joined), the group reconfigure gave it last (null: the
  // world) and whether it has called reconfigure.
  int restart_count = 0;
  std::int64_t epoch = 0;
  std::shared_ptr<detail::GroupState> membership;
  bool reconfigured = false;
  // reconfigure's agreement, made by the backend (null: it cannot): blocks until the callers
  // agree on a membership, or raises TimeoutError at `timeout`.
  std::function<Rejoined(std::chrono::milliseconds timeout)> rejoin;
};

// The calling rank's random stream; without a context, a per-thread stream seeded from the OS.
DIST_API std::mt19937_64& random_engine();

// The calling thread's context: its thread binding, else the process context, else null. While a
// dist::sim::run is in progress, a thread with neither is a rank's helper thread, not "not
// distributed": NotInitialized saying how to bind it (dist::sim::ScopedRank).
DIST_API Context* current_context();

// The calling thread's own binding (null when unbound); exchange_binding replaces it and returns
// the previous one (dist::sim::ScopedRank uses the pair).
DIST_API Context* bound_context();
DIST_API Context* exchange_binding(Context* context);

// Counts this process's dist::sim::run calls in progress, for current_context's helper check.
class DIST_API SimRunScope {
 public:
  SimRunScope();
  ~SimRunScope();
  SimRunScope(const SimRunScope&) = delete;
  SimRunScope& operator=(const SimRunScope&) = delete;
};

// Binds a context to the calling thread for the binding's lifetime.
class DIST_API ContextBinding {
 public:
  explicit ContextBinding(Context* context);
  ~ContextBinding();
  ContextBinding(const ContextBinding&) = delete;
  ContextBinding& operator=(const ContextBinding&) = delete;

 private:
  Context* previous_;
};

// Installs (or with null, removes) the process-wide context used by threads with no binding.
DIST_API void set_process_context(std::shared_ptr<Context> context);

// Removes the process-wide context and closes every group made for it, newest first: each is marked
// destroyed and lets go of its backend, so the connections and the store's port close even while
// the user still holds Group handles (destroy_dist). Returns the context it removed (null: none).
DIST_API std::shared_ptr<Context> destroy_process_context();

// Makes the GroupState of a group the caller belongs to (or not, with a null backend).
DIST_API std::shared_ptr<detail::GroupState> make_group_state(const Context& owner,
                                                              std::vector<int> ranks,
                                                              std::shared_ptr<BackendImpl> backend);
// The same over a list the caller shares, where it knows the owner's group rank (-1: not a
// member): no search and no copy, as sim makes every rank's world group.
DIST_API std::shared_ptr<detail::GroupState> make_group_state(
    const Context& owner, std::shared_ptr<const std::vector<int>> ranks, int group_rank,
    std::shared_ptr<BackendImpl> backend);

}  // namespace dist::core
