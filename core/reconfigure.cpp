// dist::reconfigure and dist::restart_count (<dist/fault_tolerance.hpp>): the front end checks the
// group, asks the backend's agreement (Context::rejoin), aborts the rank's groups when the
// membership changed and keeps the new group as the rank's membership.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/context.hpp"
#include "core/group_text.hpp"
#include "core/recovery.hpp"
#include "dist/errors.hpp"
#include "dist/fault_tolerance.hpp"

namespace dist {

namespace {

std::string epoch_text(std::int64_t epoch) {
  return epoch < 0 ? std::string("none yet") : "epoch " + std::to_string(epoch);
}

// The group the caller holds for the membership: the world, or the last group reconfigure gave it.
std::shared_ptr<detail::GroupState> current_membership(core::Context& ctx, const Group& group) {
  const auto latest = ctx.membership ? ctx.membership : ctx.world;
  const auto given = core::group_state(ctx, group, "dist::reconfigure");
  if (given == latest) return latest;
  if (given == ctx.world)
    throw InvalidArgument("dist::reconfigure: rank " + std::to_string(ctx.rank) +
                          " passed the world, but it belongs to the " +
                          core::group_text(*latest->ranks) + " (" + epoch_text(ctx.epoch) +
                          ") since an earlier reconfigure: pass that group");
  if (given->aborted.load(std::memory_order_acquire))
    throw Aborted("dist::reconfigure: " + given->aborted_text);
  throw InvalidArgument("dist::reconfigure: the " + core::group_text(*given->ranks) +
                        " is neither the world nor the group reconfigure gave rank " +
                        std::to_string(ctx.rank) +
                        " last (groups of a membership are not "
                        "reconfigured themselves: pass the membership's group)");
}

}  // namespace

Group reconfigure(const Group& group, ReconfigureOptions options) {
  core::Context* current = core::current_context();
  if (!current)
    throw NotInitialized(
        "dist::reconfigure: no distributed context (call init_dist, or run inside "
        "dist::sim::run)");
  core::Context& ctx = *current;
  if (options.timeout && options.timeout->count() <= 0)
    throw InvalidArgument("dist::reconfigure: the timeout must be positive, got " +
                          std::to_string(options.timeout->count()) + " ms");
  const auto held = current_membership(ctx, group);
  ctx.reconfigured = true;
  if (ctx.world_size == 1 && !ctx.rejoin) return Group(held);  // a world of one stays one
  if (!ctx.rejoin) {
    const std::string why = ctx.world->backend ? ctx.world->backend->recovery_refusal() : "";
    throw InvalidArgument(
        "dist::reconfigure: " +
        (why.empty() ? "the " + std::string(to_string(ctx.kind)) +
                           " backend cannot reconfigure yet (sim can: run the elastic path there)"
                     : why));
  }
  core::Rejoined agreed = ctx.rejoin(options.timeout.value_or(ctx.timeout));
  if (agreed.epoch == ctx.epoch) return Group(held);  // nobody came or went
  // The membership changed: every group of the old one may hold a lost rank, so each is aborted
  // here (an aborted one stays as it is).
  core::abort_groups(ctx, core::every_group(ctx),
                     "dist::reconfigure (the membership became " + epoch_text(agreed.epoch) + ")",
                     "use the group dist::reconfigure returned");
  auto made = core::make_group_state(ctx, std::move(agreed.members), std::move(agreed.backend));
  ctx.epoch = agreed.epoch;
  ctx.membership = made;
  return Group(std::move(made));
}

int restart_count() {
  const core::Context* ctx = core::current_context();
  return ctx ? ctx->restart_count : core::launcher_restart_count();
}

}  // namespace dist
