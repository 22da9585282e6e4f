// Process groups, completion handles and the query/control functions of mmengine.dist.
// Without a distributed context (no sim run, no init_dist) they answer as MMEngine does when not
// distributed: world size 1, rank 0, no backend.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dist/export.hpp"
#include "dist/types.hpp"

namespace dist {

namespace detail {
struct GroupState;
class WorkState;
}  // namespace detail

// A set of ranks that communicate together. A default-constructed Group means the default
// (world) group of the calling rank's context. A rank that is not a member of a group made by
// new_group gets a Group it cannot communicate on: using it raises InvalidArgument.
class DIST_API Group {
 public:
  Group() = default;
  explicit Group(std::shared_ptr<detail::GroupState> state) : state_(std::move(state)) {}

  // Whether this is the default-group placeholder.
  bool is_default() const { return !state_; }
  // Whether the calling rank belongs to the group.
  bool is_member() const;
  // The global ranks of the members, in group-rank order.
  std::vector<int> ranks() const;
  const std::shared_ptr<detail::GroupState>& state() const { return state_; }

 private:
  std::shared_ptr<detail::GroupState> state_;
};

// Completion of an asynchronous operation. wait() blocks until it completes (within the
// backend's timeout) and rethrows its error; a default-constructed Work is already complete.
// The buffers given to the operation must stay alive and untouched until wait() returns.
// [[nodiscard]]: a Work dropped unwaited loses the operation's error and the moment its buffers
// are free (the *_async calls, isend and irecv return one). DIST_API's visibility is spelled as a
// standard attribute here: GCC takes no __attribute__ after [[nodiscard]].
class [[nodiscard]] [[gnu::visibility("default")]] Work {
 public:
  Work() = default;
  explicit Work(std::shared_ptr<detail::WorkState> state) : state_(std::move(state)) {}
  Work(const Work&) = default;
  Work(Work&&) noexcept = default;
  Work& operator=(const Work&) = default;
  Work& operator=(Work&&) noexcept = default;
  // Destroyed by an exception unwinding the stack it was made on, before it completed: the
  // buffers it uses are going too, so the backend stops using them first (sim fails a call still
  // gathering for every peer, and waits out one that runs).
  ~Work();

  void wait();
  // wait() within `timeout` (or the backend's timeout when shorter): TimeoutError if the
  // operation has not completed by then. As in torch, the operation has then failed on this rank
  // (its buffers are not to be trusted); a collective's TimeoutError names the ranks that never
  // joined where the backend knows them.
  void wait(std::chrono::milliseconds timeout);
  bool is_completed() const;
  // The error the operation failed with; null while it is pending or after it succeeded.
  std::exception_ptr exception() const;
  // The group rank a receive's data came from (the sender an any_source irecv matched), once it
  // has completed successfully; -1 while it is pending, after it failed, and for every other
  // operation.
  int source() const;
  // The implementer's side (null: already complete).
  const std::shared_ptr<detail::WorkState>& state() const { return state_; }

 private:
  std::shared_ptr<detail::WorkState> state_;
  int unwinding_ = std::uncaught_exceptions();  // exceptions in flight when it was made
};

DIST_API bool is_distributed();
// torch's name for is_distributed: a world exists (a sim run's, or init_dist's).
DIST_API bool is_initialized();
// The number of ranks in `group`; -1 when the caller is not a member (as torch).
DIST_API int get_world_size(const Group& group = {});
// The caller's rank in `group`; -1 when the caller is not a member.
DIST_API int get_rank(const Group& group = {});
// The backend of `group`; empty when not distributed; InvalidArgument when the caller is not a
// member of it (as torch).
DIST_API std::optional<Backend> get_backend(const Group& group = {});
// The device collectives of `group` communicate through (cpu, or cuda:N for nccl).
DIST_API Device get_comm_device(const Group& group = {});
// The rank and world size in `group`, in that order.
DIST_API std::pair<int, int> get_dist_info(const Group& group = {});
DIST_API bool is_main_process(const Group& group = {});
// Between the ranks of `group` and the world's: InvalidArgument for a global rank outside the
// group, or a group rank out of range. (Not distributed, the world is rank 0 alone.)
DIST_API int get_group_rank(const Group& group, int global_rank);
DIST_API int get_global_rank(const Group& group, int group_rank);

// The caller's node: rank and size within it, and its group (empty when not distributed).
// Distributed without a local group, they raise NotInitialized, as MMEngine does.
DIST_API int get_local_rank();
DIST_API int get_local_size();
DIST_API std::optional<Group> get_local_group();

// Blocks until every rank of `group` has called it. A no-op when not distributed.
DIST_API void barrier(const Group& group = {});
DIST_API Work barrier_async(const Group& group = {});
// A barrier that names who did not come: TimeoutError within `timeout` naming the first rank
// (in group order) that had not arrived, or every such rank with `wait_all_ranks`. Sim makes it
// one barrier waited with the timeout (virtual time in deterministic mode); the real backends
// meet in the job's store, so a rank stuck outside dist is named as well.
DIST_API void monitored_barrier(std::chrono::milliseconds timeout, bool wait_all_ranks = false,
                                const Group& group = {});

// Creates a group of the given global ranks (distinct, in range, in the order given). Like
// torch.distributed.new_group, every rank of the world must call it with the same list (read in
// place: a program may hand every rank one shared list).
DIST_API Group new_group(const std::vector<int>& ranks);

// new_group's options (torch's backend= and timeout=): the group's own backend (a gloo group under
// an nccl world, as detectron2 keeps for its object collectives) and timeout (positive). Sim
// records the backend asked for (get_backend returns it) and waits on the group's calls with the
// timeout; a real world connects the members anew through its store, with that backend and
// timeout (a backend this build lacks raises BackendError).
// use_local_synchronization (torch's): only the group's members call new_group, each with the same
// list; a rank outside the list may call it too and gets, at once, a Group it is not a member of.
// Members that make several such groups with one list pair them up in the order they make them.
struct GroupOptions {
  std::optional<Backend> backend = std::nullopt;
  std::optional<std::chrono::milliseconds> timeout = std::nullopt;
  bool use_local_synchronization = false;
};
DIST_API Group new_group(const std::vector<int>& ranks, const GroupOptions& options);

// Leaves the world set up by init_process_group / init_dist (<dist/init.hpp>, dist::real),
// closing its connections; afterwards the process is not distributed. A no-op when nothing is
// initialised.
DIST_API void destroy_dist();

// MMEngine's infer_launcher: "pytorch" if WORLD_SIZE is set, else "slurm" if SLURM_NTASKS is,
// else "mpi" if OMPI_COMM_WORLD_LOCAL_RANK is, else "none".
DIST_API std::string infer_launcher();

// Returns a callable that runs f with its arguments on rank 0 of the world only (MMEngine's
// decorator: `if is_main_process(): return func(*args, **kwargs)`). It returns std::optional<R>
// (engaged on rank 0 only; R without reference/cv), or nothing when f returns void.
// [[nodiscard]]: the callable does nothing until it is called.
template <class F>
[[nodiscard]] auto master_only(F f) {
  return [f = std::move(f)]<class... Args>(Args&&... args) mutable {
    using R = std::invoke_result_t<F&, Args&&...>;
    if constexpr (std::is_void_v<R>) {
      if (is_main_process()) f(std::forward<Args>(args)...);
    } else {
      using V = std::remove_cvref_t<R>;  // a reference result is returned as a copy
      if (!is_main_process()) return std::optional<V>{};
      return std::optional<V>{f(std::forward<Args>(args)...)};
    }
  };
}

}  // namespace dist
