// dist::abort and dist::shrink_group (<dist/fault_tolerance.hpp>): the front end marks the
// groups and asks their backends (BackendImpl::recovery_refusal, abort, split_local).
#include "dist/fault_tolerance.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/group_text.hpp"
#include "core/validate.hpp"
#include "dist/errors.hpp"

namespace dist {

namespace {

using State = std::shared_ptr<detail::GroupState>;

// The group's state, aborted or not (aborting twice does nothing; an aborted group is shrunk).
State state_of(core::Context& ctx, const Group& group, const std::string& function) {
  if (group.is_default()) return ctx.world;
  const State& g = group.state();
  if (g->destroyed)
    throw NotInitialized(function + ": the group's world was ended by destroy_dist()");
  if (g->owner != &ctx)
    throw InvalidArgument(function + ": the group belongs to another rank or run");
  return g;
}

// The groups `groups` stand for, each once: the world stands for every group of the context.
std::vector<State> abort_targets(core::Context& ctx, std::span<const Group> groups) {
  std::vector<State> targets;
  auto add = [&](const State& g) {
    if (std::find(targets.begin(), targets.end(), g) == targets.end()) targets.push_back(g);
  };
  for (const Group& group : groups) {
    const State g = state_of(ctx, group, "dist::abort");
    if (g != ctx.world) {
      add(g);
      continue;
    }
    add(ctx.world);
    if (ctx.local) add(ctx.local);
    if (ctx.object_group) add(ctx.object_group);
    std::lock_guard lock(ctx.groups_mutex);
    for (const State& made : ctx.groups) add(made);
  }
  return targets;
}

// Marks the groups aborted on this rank, then ends their pending calls; `by` says how
// ("dist::abort"). A backend that cannot refuses first, before any group is marked.
void abort_states(core::Context& ctx, const std::vector<State>& targets, const std::string& by) {
  for (const State& g : targets)
    if (g->backend && g->rank >= 0)
      if (const std::string why = g->backend->recovery_refusal(); !why.empty())
        throw InvalidArgument(by + ": " + why);
  for (const State& g : targets) {
    std::call_once(g->abort_once, [&] {
      g->aborted_text = "the " + core::group_text(*g->ranks) + " was aborted on rank " +
                        std::to_string(ctx.rank) + " by " + by +
                        " (make a group of the survivors with shrink_group)";
      g->aborted.store(true, std::memory_order_release);
      if (g->backend && g->rank >= 0)
        g->backend->abort(std::make_exception_ptr(Aborted(g->aborted_text)));
    });
  }
}

}  // namespace

void abort(const Group& group) { abort(std::span<const Group>(&group, 1)); }

void abort(std::span<const Group> groups) {
  core::Context* ctx = core::current_context();
  if (!ctx) {
    if (std::any_of(groups.begin(), groups.end(), [](const Group& g) { return !g.is_default(); }))
      throw InvalidArgument("dist::abort: a group was given but no distributed context is active");
    return;  // not distributed: nothing is pending anywhere
  }
  abort_states(*ctx, abort_targets(*ctx, groups), "dist::abort");
}

Group shrink_group(const Group& group, std::span<const int> excluded_ranks, ShrinkOptions options) {
  core::Context* current = core::current_context();
  if (!current)
    throw NotInitialized(
        "shrink_group: no distributed context (call init_dist, or run inside "
        "dist::sim::run)");
  core::Context& ctx = *current;
  const State parent = state_of(ctx, group, "shrink_group");
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
  if (options.abort_parent) abort_states(ctx, {parent}, "shrink_group's abort_parent");
  // The survivors alone make it: new_group's use_local_synchronization over the parent.
  const GroupOptions made{.timeout = options.timeout, .use_local_synchronization = true};
  auto backend = ctx.make_group ? ctx.make_group(*g.backend, survivors, made)
                                : g.backend->split_local(survivors);
  std::vector<int> members;
  for (const int r : survivors) members.push_back(globals[static_cast<std::size_t>(r)]);
  return Group(core::make_group_state(ctx, std::move(members), std::move(backend)));
}

}  // namespace dist
