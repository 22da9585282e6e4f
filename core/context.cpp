// Context lookup: thread binding first (sim ranks), then the process context (init_dist).
#include "core/context.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "dist/errors.hpp"

namespace dist::core {

namespace {
thread_local Context* thread_context = nullptr;
std::mutex process_mutex;
std::shared_ptr<Context> process_context;
std::atomic<int> sim_runs{0};
}  // namespace

Context* current_context() {
  if (thread_context) return thread_context;
  std::lock_guard lock(process_mutex);
  if (!process_context && sim_runs.load(std::memory_order_acquire) > 0)
    throw NotInitialized(
        "called from a thread that is not a rank of the running dist::sim::run (a "
        "thread started by a rank is not that rank); bind it to its rank: take `auto rank = "
        "dist::sim::current_rank();` on the rank's thread and hold `dist::sim::ScopedRank "
        "scope(rank);` on the helper thread");
  return process_context.get();
}

Context* bound_context() { return thread_context; }

Context* exchange_binding(Context* context) { return std::exchange(thread_context, context); }

ContextBinding::ContextBinding(Context* context) : previous_(exchange_binding(context)) {}

ContextBinding::~ContextBinding() { thread_context = previous_; }

SimRunScope::SimRunScope() { sim_runs.fetch_add(1, std::memory_order_acq_rel); }

SimRunScope::~SimRunScope() { sim_runs.fetch_sub(1, std::memory_order_acq_rel); }

void set_process_context(std::shared_ptr<Context> context) {
  if (context) {
    // A process that exits without destroy_dist tears its context down from atexit, which runs
    // before the destructors of the function-local statics made before this call (asio's error
    // categories, made with the store). process_context, a namespace-scope global, is destroyed
    // after them, and its store would compare error codes against destroyed categories.
    static const bool teardown_at_exit = [] {
      std::atexit([] { destroy_process_context(); });
      return true;
    }();
    (void)teardown_at_exit;
  }
  std::lock_guard lock(process_mutex);
  process_context = std::move(context);
}

std::shared_ptr<Context> destroy_process_context() {
  std::shared_ptr<Context> old;
  {
    std::lock_guard lock(process_mutex);
    old = std::exchange(process_context, nullptr);
  }
  if (!old) return old;
  std::vector<std::shared_ptr<detail::GroupState>> groups;
  {
    std::lock_guard lock(old->groups_mutex);
    groups.assign(old->groups.rbegin(), old->groups.rend());
    old->groups.clear();
  }
  for (auto& g : groups) {
    g->destroyed = true;
    g->backend.reset();
  }
  return old;
}

std::mt19937_64& random_engine() {
  if (Context* ctx = current_context()) {
    if (!ctx->rng) {
      std::seed_seq seeds(ctx->rng_seed.begin(), ctx->rng_seed.end());
      ctx->rng = std::make_unique<std::mt19937_64>(seeds);
    }
    return *ctx->rng;
  }
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

std::shared_ptr<detail::GroupState> make_group_state(const Context& owner, std::vector<int> ranks,
                                                     std::shared_ptr<BackendImpl> backend) {
  const auto it = std::find(ranks.begin(), ranks.end(), owner.rank);
  const int rank = it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
  return make_group_state(owner, std::make_shared<const std::vector<int>>(std::move(ranks)), rank,
                          std::move(backend));
}

std::shared_ptr<detail::GroupState> make_group_state(const Context& owner,
                                                     std::shared_ptr<const std::vector<int>> ranks,
                                                     int group_rank,
                                                     std::shared_ptr<BackendImpl> backend) {
  auto state = std::make_shared<detail::GroupState>();
  state->rank = group_rank;
  state->ranks = std::move(ranks);
  state->backend = state->rank >= 0 ? std::move(backend) : nullptr;
  state->owner = &owner;
  std::lock_guard lock(owner.groups_mutex);
  owner.groups.push_back(state);
  return state;
}

}  // namespace dist::core
