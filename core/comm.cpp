// The non-template dist::comm helpers (detectron2's comm.py): synchronize, the object group,
// shared_random_seed and the local process group.
#include "dist/comm.hpp"

#include <string>

#include "core/context.hpp"
#include "core/validate.hpp"
#include "dist/errors.hpp"

namespace dist::comm {

namespace {
const char* const missing_local_group =
    ": the local process group is not created; start the ranks with a launcher that gives the "
    "node layout (sim::run, init_dist), or call comm::create_local_process_group("
    "workers_per_machine) on every rank";
}  // namespace

void synchronize() {
  if (dist::get_world_size() == 1) return;
  barrier();
}

void set_object_group(std::optional<Group> group) {
  core::Context* ctx = core::current_context();
  if (!group || group->is_default()) {
    if (ctx) ctx->object_group = nullptr;
    return;
  }
  const auto target = core::resolve_group(*group, "set_object_group");
  if (target.size != ctx->world_size)
    throw InvalidArgument("set_object_group: the object group must hold every rank of the world (" +
                          std::to_string(ctx->world_size) + "), it holds " +
                          std::to_string(target.size));
  ctx->object_group = group->state();
}

Group object_group() {
  core::Context* ctx = core::current_context();
  return ctx && ctx->object_group ? Group(ctx->object_group) : Group{};
}

int shared_random_seed() {
  const auto seed = static_cast<int>(core::random_engine()() >> 33);
  return comm::all_gather(seed)[0];
}

Group create_local_process_group(int workers_per_machine) {
  const int n = workers_per_machine;
  if (n <= 0)
    throw InvalidArgument("create_local_process_group: argument 'workers_per_machine' = " +
                          std::to_string(n) + " must be positive");
  core::Context* ctx = core::current_context();
  if (!ctx)
    throw NotInitialized(
        "create_local_process_group: no distributed context (call init_dist, "
        "or run inside dist::sim::run)");
  if (ctx->comm_local_workers == n) return Group(ctx->local);
  if (ctx->comm_local_workers != 0)
    throw InvalidArgument(
        "create_local_process_group: the local process group was already "
        "created with workers_per_machine = " +
        std::to_string(ctx->comm_local_workers) + ", not " + std::to_string(n));
  if (ctx->world_size % n != 0)
    throw InvalidArgument("create_local_process_group: the world size " +
                          std::to_string(ctx->world_size) +
                          " is not divisible by workers_per_machine = " + std::to_string(n));
  Group local;
  for (int machine = 0; machine < ctx->world_size / n; ++machine) {
    std::vector<int> ranks;
    for (int i = 0; i < n; ++i) ranks.push_back(machine * n + i);
    Group g = new_group(std::move(ranks));
    if (machine == ctx->rank / n) local = g;
  }
  ctx->local = local.state();
  ctx->comm_local_workers = n;
  return local;
}

Group get_local_process_group() {
  core::Context* ctx = core::current_context();
  if (!ctx || !ctx->local)
    throw NotInitialized(std::string("get_local_process_group") + missing_local_group);
  return Group(ctx->local);
}

}  // namespace dist::comm
