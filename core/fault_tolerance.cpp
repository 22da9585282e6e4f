// dist::abort and dist::shrink_group (<dist/fault_tolerance.hpp>): the front end marks the
// groups and asks their backends (BackendImpl::recovery_refusal, abort, split_local).
#include "dist/fault_tolerance.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/group_text.hpp"
#include "core/recovery.hpp"
#include "core/validate.hpp"
#include "dist/errors.hpp"

namespace dist {

void abort(const Group& group) { abort(std::span<const Group>(&group, 1)); }

void abort(std::span<const Group> groups) {
  core::Context* ctx = core::current_context();
  if (!ctx) {
    if (std::any_of(groups.begin(), groups.end(), [](const Group& g) { return !g.is_default(); }))
      throw InvalidArgument("dist::abort: a group was given but no distributed context is active");
    return;  // not distributed: nothing is pending anywhere
  }
  std::vector<std::shared_ptr<detail::GroupState>> targets;
  for (const Group& group : groups) {
    const auto g = core::group_state(*ctx, group, "dist::abort");
    for (const auto& t : g == ctx->world ? core::every_group(*ctx) : decltype(targets){g})
      if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
  }
  core::abort_groups(*ctx, targets, "dist::abort");
}

Group shrink_group(const Group& group, std::span<const int> excluded_ranks, ShrinkOptions options) {
  core::Context* current = core::current_context();
  if (!current)
    throw NotInitialized(
        "shrink_group: no distributed context (call init_dist, or run inside "
        "dist::sim::run)");
  core::Context& ctx = *current;
  const auto parent = core::group_state(ctx, group, "shrink_group");
  if (parent->rank < 0)
    throw InvalidArgument("shrink_group: rank " + std::to_string(ctx.rank) +
                          " is not a member of the " + core::group_text(*parent->ranks));
  const core::ResolvedGroup g{parent.get(), parent->backend.get(),
                              static_cast<int>(parent->ranks->size()), parent->rank};
  if (options.timeout && options.timeout->count() <= 0)
    throw InvalidArgument("shrink_group: the timeout must be positive, got " +
                          std::to_string(options.timeout->count()) + " ms");
  std::vector<bool> excluded(static_cast<std::size_t>(g.size), false);
  for (const int r : excluded_ranks) {
    core::check_rank(r, g.size, "shrink_group", "excluded_ranks");
    if (excluded[static_cast<std::size_t>(r)])
      throw InvalidArgument("shrink_group: excluded_ranks names group rank " + std::to_string(r) +
                            " twice");
    excluded[static_cast<std::size_t>(r)] = true;
  }
  if (excluded[static_cast<std::size_t>(g.rank)])
    throw InvalidArgument("shrink_group: rank " + std::to_string(ctx.rank) +
                          " excludes itself (group rank " + std::to_string(g.rank) +
                          "): only the survivors call shrink_group, each keeping itself");
  if (!g.backend) return Group(core::make_group_state(ctx, {ctx.rank}, nullptr));  // a world of 1
  if (const std::string why = g.backend->recovery_refusal(); !why.empty())
    throw InvalidArgument("shrink_group: " + why);
  // The survivors, as ranks of the parent, in the order of their global ranks.
  const std::vector<int>& globals = *parent->ranks;
  std::vector<int> survivors;
  for (int r = 0; r < g.size; ++r)
    if (!excluded[static_cast<std::size_t>(r)]) survivors.push_back(r);
  std::stable_sort(survivors.begin(), survivors.end(), [&](int a, int b) {
    return globals[static_cast<std::size_t>(a)] < globals[static_cast<std::size_t>(b)];
  });
  // Aborted first, unless the backend's shrink ends the pending calls itself (nccl's
  // NCCL_SHRINK_ABORT): then marked aborted after it.
  const bool aborting_shrink = options.abort_parent && g.backend->shrink_aborts_parent();
  const char* const by = "shrink_group's abort_parent";
  if (options.abort_parent && !aborting_shrink) core::abort_groups(ctx, {parent}, by);
  std::vector<int> members;
  for (const int r : survivors) members.push_back(globals[static_cast<std::size_t>(r)]);
  // The survivors alone make it: the backend's own way, else new_group's
  // use_local_synchronization (a group of the members' world ranks, connected anew).
  std::shared_ptr<core::BackendImpl> backend;
  try {
    backend = g.backend->shrink(survivors, options.timeout, aborting_shrink);
  } catch (...) {
    if (aborting_shrink) core::abort_groups(ctx, {parent}, by);
    throw;
  }
  if (aborting_shrink) core::abort_groups(ctx, {parent}, by);
  if (!backend) {
    if (!ctx.make_group || !ctx.world->backend)
      throw InvalidArgument("shrink_group: this backend cannot make a group of the survivors");
    const GroupOptions made{.timeout = options.timeout, .use_local_synchronization = true};
    backend = ctx.make_group(*ctx.world->backend, members, made);
  }
  return Group(core::make_group_state(ctx, std::move(members), std::move(backend)));
}

}  // namespace dist
