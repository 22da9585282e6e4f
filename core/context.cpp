// Context lookup: thread binding first (sim ranks), then the process context (init_dist).
#include "core/context.hpp"

#include <algorithm>
#include <mutex>

namespace dist::core {

namespace {
thread_local Context* bound_context = nullptr;
std::mutex process_mutex;
std::shared_ptr<Context> process_context;
}  // namespace

Context* current_context() {
  if (bound_context) return bound_context;
  std::lock_guard lock(process_mutex);
  return process_context.get();
}

ContextBinding::ContextBinding(Context* context) : previous_(bound_context) {
  bound_context = context;
}

ContextBinding::~ContextBinding() { bound_context = previous_; }

void set_process_context(std::shared_ptr<Context> context) {
  std::lock_guard lock(process_mutex);
  process_context = std::move(context);
}

std::mt19937_64& random_engine() {
  if (Context* ctx = current_context()) return ctx->rng;
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

std::shared_ptr<detail::GroupState> make_group_state(const Context& owner, std::vector<int> ranks,
                                                     std::shared_ptr<BackendImpl> backend) {
  auto state = std::make_shared<detail::GroupState>();
  const auto it = std::find(ranks.begin(), ranks.end(), owner.rank);
  state->rank = it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
  state->ranks = std::move(ranks);
  state->backend = state->rank >= 0 ? std::move(backend) : nullptr;
  state->owner = &owner;
  return state;
}

}  // namespace dist::core
