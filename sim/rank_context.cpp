// A sim rank's context (sim/rank_context.hpp).
#include "sim/rank_context.hpp"

#include <string>
#include <vector>

#include "core/recovery.hpp"
#include "dist/errors.hpp"
#include "sim/sim_backend.hpp"

namespace dist::sim {

namespace {
// Sets up `rank`'s context: its world and node groups, its random stream and how it makes groups.
void fill_context(World& world, core::Context* ctx, int rank) {
  const Cluster& c = world.cluster();
  ctx->kind = dist::Backend::sim;
  ctx->rank = rank;
  ctx->world_size = c.world_size();
  ctx->timeout = c.timeout;
  ctx->check_send_buffers = c.check_send_buffers;
  ctx->rng_seed = {static_cast<std::uint32_t>(c.seed), static_cast<std::uint32_t>(c.seed >> 32),
                   static_cast<std::uint32_t>(rank)};
  // Every rank's world and node groups share their communicator's member list.
  const auto& world_comm = world.world_comm();
  ctx->world = core::make_group_state(
      *ctx, std::shared_ptr<const std::vector<int>>(world_comm, &world_comm->members), rank,
      std::make_shared<SimBackend>(world, world_comm, rank));
  // new_group's options: the group is split from the world as any other (by its members alone
  // with use_local_synchronization); its backend option is only recorded (sim plays every
  // backend), its timeout bounds its waits.
  ctx->make_group = [](core::BackendImpl& world_backend, const std::vector<int>& ranks,
                       const GroupOptions& options) {
    auto group = options.use_local_synchronization ? world_backend.split_local(ranks)
                                                   : world_backend.split(ranks);
    if (group && options.timeout) static_cast<SimBackend&>(*group).set_timeout(*options.timeout);
    return group;
  };
  const auto& node_comm = world.node_comm(rank / c.ranks_per_node);
  ctx->local = core::make_group_state(
      *ctx, std::shared_ptr<const std::vector<int>>(node_comm, &node_comm->members),
      rank % c.ranks_per_node,
      std::make_shared<SimBackend>(world, node_comm, rank % c.ranks_per_node));
  ctx->rejoin = [&world, rank](std::chrono::milliseconds timeout) {
    const World::Agreed agreed = world.reconfigure(rank, timeout);
    return core::Rejoined{
        agreed.epoch, agreed.comm->members,
        std::make_shared<SimBackend>(world, agreed.comm, agreed.comm->group_rank_of(rank))};
  };
}

}  // namespace

std::unique_ptr<core::Context> make_context(World& world, int rank) {
  auto ctx = std::make_unique<core::Context>();
  fill_context(world, ctx.get(), rank);
  return ctx;
}

void replace_process(World& world, core::Context* ctx, int rank, int restart_count) {
  {
    std::lock_guard lock(ctx->groups_mutex);
    for (const auto& g : ctx->groups) g->destroyed = true;  // a handle kept past the kill
    ctx->groups.clear();
  }
  ctx->object_group = nullptr;
  ctx->comm_local_workers = 0;
  ctx->rng.reset();
  ctx->works = std::make_shared<core::WorkLedger>();
  fill_context(world, ctx, rank);
  ctx->restart_count = restart_count;
  core::abort_until_joined(*ctx);
}

void check_joined(const core::Context& ctx) {
  if (ctx.restart_count == 0 || ctx.reconfigured) return;
  throw InvalidArgument("rank " + std::to_string(ctx.rank) +
                        "'s replacement (restart_count() = " + std::to_string(ctx.restart_count) +
                        ") returned without calling dist::reconfigure(): a restarted process "
                        "joins the job with it before anything else");
}

}  // namespace dist::sim
