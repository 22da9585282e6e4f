// The groups of a rank and their abort (core/recovery.hpp).
#include "core/recovery.hpp"

#include <algorithm>
#include <limits>
#include <mutex>

#include "core/group_text.hpp"
#include "core/init/rendezvous.hpp"
#include "dist/errors.hpp"

namespace dist::core {

std::shared_ptr<detail::GroupState> group_state(Context& ctx, const Group& group,
                                                const std::string& function) {
  if (group.is_default()) return ctx.world;
  const auto& g = group.state();
  if (g->destroyed)
    throw NotInitialized(function + ": the group's world was ended by destroy_dist()");
  if (g->owner != &ctx)
    throw InvalidArgument(function + ": the group belongs to another rank or run");
  return g;
}

std::vector<std::shared_ptr<detail::GroupState>> every_group(Context& ctx) {
  std::vector<std::shared_ptr<detail::GroupState>> all;
  auto add = [&](const std::shared_ptr<detail::GroupState>& g) {
    if (g && std::find(all.begin(), all.end(), g) == all.end()) all.push_back(g);
  };
  add(ctx.world);
  add(ctx.local);
  add(ctx.object_group);
  std::lock_guard lock(ctx.groups_mutex);
  for (const auto& made : ctx.groups) add(made);
  return all;
}

void abort_groups(Context& ctx, const std::vector<std::shared_ptr<detail::GroupState>>& targets,
                  const std::string& by, const std::string& next) {
  for (const auto& g : targets)
    if (g->backend && g->rank >= 0)
      if (const std::string why = g->backend->recovery_refusal(); !why.empty())
        throw InvalidArgument(by + ": " + why);
  for (const auto& g : targets) {
    std::call_once(g->abort_once, [&] {
      g->aborted_text = "the " + group_text(*g->ranks) + " was aborted on rank " +
                        std::to_string(ctx.rank) + " by " + by + " (" + next + ")";
      g->aborted.store(true, std::memory_order_release);
      if (g->backend && g->rank >= 0)
        g->backend->abort(std::make_exception_ptr(Aborted(g->aborted_text)));
    });
  }
}

void abort_until_joined(Context& ctx) {
  ctx.epoch = -1;
  ctx.membership = nullptr;
  ctx.reconfigured = false;
  abort_groups(ctx, every_group(ctx),
               "its restart (this process replaces the killed one, restart_count() = " +
                   std::to_string(ctx.restart_count) + ")",
               "call dist::reconfigure() to join the job");
}

int launcher_restart_count() {
  if (!get_env("TORCHELASTIC_RESTART_COUNT")) return 0;
  return static_cast<int>(require_env_int("TORCHELASTIC_RESTART_COUNT", "dist::restart_count", 0,
                                          std::numeric_limits<int>::max()));
}

}  // namespace dist::core
