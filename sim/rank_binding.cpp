// dist::sim::current_rank and ScopedRank: a helper thread borrows its rank's context, checked
// against the registry of the runs in progress.
#include "sim/rank_binding.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "dist/errors.hpp"
#include "dist/sim/run.hpp"

namespace dist::sim {

namespace {
std::mutex registry_mutex;
std::map<const core::Context*, std::uint64_t> live_contexts;  // context -> its run's id
std::atomic<std::uint64_t> next_run_id{1};
}  // namespace

struct RankBindingAccess {
  static RankBinding make(core::Context* context, std::uint64_t run) {
    RankBinding b;
    b.context_ = context;
    b.run_ = run;
    b.rank_ = context->rank;
    return b;
  }
  static core::Context* context(const RankBinding& b) {
    return static_cast<core::Context*>(b.context_);
  }
  static std::uint64_t run(const RankBinding& b) { return b.run_; }
};

LiveRun::LiveRun(const std::vector<std::unique_ptr<core::Context>>& contexts)
    : id_(next_run_id.fetch_add(1)) {
  std::lock_guard lock(registry_mutex);
  for (const auto& c : contexts) {
    contexts_.push_back(c.get());
    live_contexts[c.get()] = id_;
  }
}

LiveRun::~LiveRun() {
  std::lock_guard lock(registry_mutex);
  for (const auto* c : contexts_) live_contexts.erase(c);
}

RankBinding current_rank() {
  core::Context* ctx = core::bound_context();
  std::lock_guard lock(registry_mutex);
  const auto it = ctx ? live_contexts.find(ctx) : live_contexts.end();
  if (it == live_contexts.end())
    throw InvalidArgument(
        "dist::sim::current_rank: the calling thread is not a rank of a running dist::sim::run "
        "(call it on the rank's own thread, or on a thread a ScopedRank binds)");
  return RankBindingAccess::make(ctx, it->second);
}

ScopedRank::ScopedRank(const RankBinding& binding) : previous_(nullptr) {
  core::Context* ctx = RankBindingAccess::context(binding);
  {
    std::lock_guard lock(registry_mutex);
    const auto it = ctx ? live_contexts.find(ctx) : live_contexts.end();
    if (it == live_contexts.end() || it->second != RankBindingAccess::run(binding))
      throw InvalidArgument("dist::sim::ScopedRank: the binding of rank " +
                            std::to_string(binding.rank()) +
                            (ctx ? " belongs to a dist::sim::run that has ended"
                                 : " is empty (take it with dist::sim::current_rank())"));
  }
  previous_ = core::exchange_binding(ctx);
}

ScopedRank::~ScopedRank() { core::exchange_binding(static_cast<core::Context*>(previous_)); }

}  // namespace dist::sim
