// The distributed context of a rank: its backend, world and local groups. A sim rank thread binds
// its context thread-locally; init_dist sets a process-wide one. No context = not distributed.
#pragma once

#include <chrono>
#include <memory>
#include <random>
#include <vector>

#include "core/backend_impl.hpp"
#include "dist/api.hpp"

namespace dist::detail {

struct GroupState {
  std::vector<int> ranks;                  // global ranks, in group-rank order
  int rank = -1;                           // the owner's group rank; -1 when not a member
  std::shared_ptr<core::BackendImpl> backend;  // null when not a member
  const void* owner = nullptr;             // the Context this group belongs to
};

}  // namespace dist::detail

namespace dist::core {

struct Context {
  dist::Backend kind = dist::Backend::sim;
  int rank = 0;
  int world_size = 1;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  std::shared_ptr<detail::GroupState> world;
  std::shared_ptr<detail::GroupState> local;  // null until a local group exists
  std::mt19937_64 rng;  // this rank's random stream (sim: derived from the cluster seed)
  // dist::comm state (detectron2's module globals, per rank): the group object gathers use
  // (null: the world), and the argument create_local_process_group was called with (0: never).
  std::shared_ptr<detail::GroupState> object_group;
  int comm_local_workers = 0;
};

// The calling rank's random stream; without a context, a per-thread stream seeded from the OS.
DIST_API std::mt19937_64& random_engine();

// The calling thread's context: its thread binding, else the process context, else null.
DIST_API Context* current_context();

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

// Makes the GroupState of a group the caller belongs to (or not, with a null backend).
DIST_API std::shared_ptr<detail::GroupState> make_group_state(const Context& owner,
                                                              std::vector<int> ranks,
                                                              std::shared_ptr<BackendImpl> backend);

}  // namespace dist::core
