// Groups and the query/control functions of mmengine.dist (get_rank, new_group, ...),
// and the groups of a layout (core/layout.hpp).
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/group_text.hpp"
#include "core/layout.hpp"
#include "core/validate.hpp"
#include "dist/api.hpp"
#include "dist/detail/erased.hpp"
#include "dist/errors.hpp"

namespace dist {

namespace {
// The backend's shared member list when it is `ranks` (a sim group's), so every member's group
// holds that one list; null otherwise (the group keeps a copy).
std::shared_ptr<const std::vector<int>> shared_list(const core::BackendImpl* backend,
                                                    const std::vector<int>& ranks) {
  auto shared = backend ? backend->shared_members() : nullptr;
  return shared && *shared == ranks ? shared : nullptr;
}

// The same for the rank's own list of `layout`, without making it (the backend's split made its
// list from the layout: Layout::own_is_from_this_layout).
std::shared_ptr<const std::vector<int>> shared_rank_list(const core::BackendImpl* backend,
                                                         const core::Layout& layout) {
  auto shared = backend ? backend->shared_members() : nullptr;
  return shared && layout.own_is_from_this_layout(*shared) ? shared : nullptr;
}

// The state of `group` for queries: null when not distributed.
detail::GroupState* query_state(const Group& group) {
  core::Context* ctx = core::current_context();
  if (!ctx) return group.is_default() ? nullptr : group.state().get();
  return group.is_default() ? ctx->world.get() : group.state().get();
}

detail::GroupState* local_state(const char* function) {
  core::Context* ctx = core::current_context();
  if (!ctx) return nullptr;
  if (!ctx->local)
    throw NotInitialized(std::string(function) +
                         ": the local process group is not created; the launcher gave no node "
                         "layout (create one with new_group over the node's ranks)");
  return ctx->local.get();
}

void check_new_group_ranks(const std::vector<int>& ranks, int world_size) {
  if (ranks.empty()) throw InvalidArgument("new_group: argument 'ranks' is empty");
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    core::check_rank(sorted[i], world_size, "new_group", "ranks");
    if (i > 0 && sorted[i] == sorted[i - 1])
      throw InvalidArgument("new_group: argument 'ranks' lists rank " + std::to_string(sorted[i]) +
                            " twice");
  }
}
}  // namespace

bool Group::is_member() const {
  const auto* s = query_state(*this);
  return !s || s->rank >= 0;
}

std::vector<int> Group::ranks() const {
  const auto* s = query_state(*this);
  return s ? *s->ranks : std::vector<int>{0};
}

bool is_distributed() { return core::current_context() != nullptr; }

bool is_initialized() { return is_distributed(); }

int get_group_rank(const Group& group, int global_rank) {
  const auto ranks = group.ranks();
  const auto it = std::find(ranks.begin(), ranks.end(), global_rank);
  if (it == ranks.end())
    throw InvalidArgument("get_group_rank: global rank " + std::to_string(global_rank) +
                          " is not a member of the " + core::group_text(ranks));
  return static_cast<int>(it - ranks.begin());
}

int get_global_rank(const Group& group, int group_rank) {
  const auto ranks = group.ranks();
  core::check_rank(group_rank, static_cast<int>(ranks.size()), "get_global_rank", "group_rank");
  return ranks[static_cast<std::size_t>(group_rank)];
}

int get_world_size(const Group& group) {
  const auto* s = query_state(group);
  if (s && s->rank < 0) return -1;  // torch's answer on a rank outside the group
  return s ? static_cast<int>(s->ranks->size()) : 1;
}

int get_rank(const Group& group) {
  const auto* s = query_state(group);
  return s ? s->rank : 0;
}

std::optional<Backend> get_backend(const Group& group) {
  core::Context* ctx = core::current_context();
  if (!ctx) return std::nullopt;
  if (!group.is_member())
    throw InvalidArgument("get_backend: the caller (rank " + std::to_string(ctx->rank) +
                          ") is not a member of the " + core::group_text(group.ranks()) +
                          ", which has no backend on this rank (torch raises too)");
  if (group.state() && group.state()->kind) return group.state()->kind;  // new_group's option
  return ctx->kind;
}

Device get_comm_device(const Group& group) {
  const auto* s = query_state(group);
  return s && s->backend ? s->backend->device() : Device::cpu();
}

std::pair<int, int> get_dist_info(const Group& group) {
  return {get_rank(group), get_world_size(group)};
}

bool is_main_process(const Group& group) { return get_rank(group) == 0; }

int get_local_rank() {
  const auto* s = local_state("get_local_rank");
  return s ? s->rank : 0;
}

int get_local_size() {
  const auto* s = local_state("get_local_size");
  return s ? static_cast<int>(s->ranks->size()) : 1;
}

std::optional<Group> get_local_group() {
  core::Context* ctx = core::current_context();
  if (!ctx) return std::nullopt;
  local_state("get_local_group");
  return Group(ctx->local);
}

Group new_group(const std::vector<int>& ranks) {
  core::Context* ctx = core::current_context();
  if (!ctx)
    throw NotInitialized("new_group: no distributed context (call init_dist, or run inside "
                         "dist::sim::run)");
  check_new_group_ranks(ranks, ctx->world_size);
  auto backend = ctx->world->backend ? ctx->world->backend->split(ranks) : nullptr;
  if (auto shared = shared_list(backend.get(), ranks)) {
    const int group_rank = backend->rank();
    return Group(core::make_group_state(*ctx, std::move(shared), group_rank, std::move(backend)));
  }
  return Group(core::make_group_state(*ctx, ranks, std::move(backend)));
}

Group new_group(const std::vector<int>& ranks, const GroupOptions& options) {
  core::Context* ctx = core::current_context();
  if (!ctx)
    throw NotInitialized(
        "new_group: no distributed context (call init_dist, or run inside "
        "dist::sim::run)");
  check_new_group_ranks(ranks, ctx->world_size);
  if (options.timeout && options.timeout->count() <= 0)
    throw InvalidArgument("new_group: the timeout must be positive, got " +
                          std::to_string(options.timeout->count()) + " ms");
  if (!ctx->world->backend) return new_group(ranks);  // a world of one: nothing to connect
  if (options.use_local_synchronization &&
      std::find(ranks.begin(), ranks.end(), ctx->rank) == ranks.end())
    return Group(core::make_group_state(*ctx, ranks, nullptr));  // the members make it alone
  if (!ctx->make_group)
    throw InvalidArgument("new_group: this world (" + std::string(to_string(ctx->kind)) +
                          ") cannot make a group with its own backend or timeout");
  auto state =
      core::make_group_state(*ctx, ranks, ctx->make_group(*ctx->world->backend, ranks, options));
  state->kind = options.backend;
  return Group(std::move(state));
}

}  // namespace dist

namespace dist::core {

namespace {
Context& layout_context(const char* function) {
  Context* ctx = current_context();
  if (!ctx)
    throw NotInitialized(std::string(function) +
                         ": no distributed context (call init_dist, or run inside "
                         "dist::sim::run)");
  return *ctx;
}

}  // namespace

void check_layout_lists(const std::vector<std::vector<int>>& lists, const char* function) {
  const Context& ctx = layout_context(function);
  for (const auto& ranks : lists) check_new_group_ranks(ranks, ctx.world_size);
}

Group make_layout_group(const Layout& layout, const char* function) {
  Context& ctx = layout_context(function);
  auto mine = ctx.world->backend ? ctx.world->backend->split_groups(layout) : nullptr;
  if (layout.color < 0)
    return Group(
        make_group_state(ctx, layout.count ? layout.list(0) : std::vector<int>{}, nullptr));
  auto shared = shared_rank_list(mine.get(), layout);
  if (!shared) shared = std::make_shared<const std::vector<int>>(layout.own());
  return Group(make_group_state(ctx, std::move(shared), layout.position, std::move(mine)));
}

}  // namespace dist::core
