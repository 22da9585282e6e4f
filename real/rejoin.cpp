// The rejoin of the real backends and a replacement's world (rejoin.hpp).
#include "real/rejoin.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/calls/call_layer.hpp"
#include "core/store/membership.hpp"
#include "core/store/prefix_store.hpp"
#include "dist/errors.hpp"
#include "real/registry.hpp"

namespace dist::real {

namespace {

// A replacement's world until it joins: its groups are aborted, so no call reaches it; one that
// did (through a layer that does not check) is refused the same way.
class UnjoinedWorld final : public core::BackendImpl {
 public:
  UnjoinedWorld(dist::Backend kind, int rank, int size) : kind_(kind), rank_(rank), size_(size) {}
  dist::Backend kind() const override { return kind_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Work all_reduce(core::Buf, ReduceOp) override { refuse(); }
  Work broadcast(core::Buf, int) override { refuse(); }
  Work all_gather(core::Buf, core::ConstBuf) override { refuse(); }
  Work send(core::ConstBuf, int, int) override { refuse(); }
  Work recv(core::Buf, int, int) override { refuse(); }
  Work barrier() override { refuse(); }
  std::shared_ptr<core::BackendImpl> split(const std::vector<int>&) override { refuse(); }
  std::string recovery_refusal() const override { return {}; }

 private:
  [[noreturn]] void refuse() const {
    throw Aborted("rank " + std::to_string(rank_) +
                  " is a replacement process that has not joined the job: call "
                  "dist::reconfigure() first");
  }
  dist::Backend kind_;
  int rank_;
  int size_;
};

// The agreed members' group of the epoch, connected through the store under "elastic/e<epoch>",
// under the call layer as a group of `world`.
std::shared_ptr<core::BackendImpl> connect_epoch(core::BackendImpl& world, const WorldSpec& spec,
                                                 const std::vector<int>& members,
                                                 std::int64_t epoch) {
  const std::string name = "e" + std::to_string(epoch);
  WorldSpec group = spec;
  group.store = std::make_shared<core::PrefixStore>("elastic/" + name, spec.store);
  group.rank =
      static_cast<int>(std::find(members.begin(), members.end(), spec.rank) - members.begin());
  group.world_size = static_cast<int>(members.size());
  group.global_ranks = members;
  const auto& entry = backend_entry(spec.backend, "dist::reconfigure");
  return core::with_group_call_layer(world, entry.make_world(group), members, name, spec.timeout);
}

bool rejoins(const WorldSpec& spec) {
  return backend_entry(spec.backend, "dist::reconfigure").rejoins;
}
std::string joined_key(int rank) { return "elastic/joined/" + std::to_string(rank); }
}  // namespace

bool is_replacement(const WorldSpec& spec) {
  return spec.restart_count > 0 && rejoins(spec) && spec.store->check({joined_key(spec.rank)});
}

void mark_joined(const WorldSpec& spec) {
  if (rejoins(spec)) spec.store->set(joined_key(spec.rank), std::string());
}

std::shared_ptr<core::BackendImpl> unjoined_world(const WorldSpec& spec) {
  return std::make_shared<UnjoinedWorld>(spec.backend, spec.rank, spec.world_size);
}

void enable_rejoin(core::Context& ctx, const WorldSpec& spec) {
  if (!rejoins(spec)) return;
  ctx.rejoin = [&ctx, spec](std::chrono::milliseconds timeout) {
    core::BackendImpl& world = *ctx.world->backend;
    const std::vector<int> lost = core::lost_ranks(world);
    const core::MembershipView agreed = core::agree_membership(
        *spec.store, spec.world_size, {{spec.rank, ctx.restart_count}, lost}, timeout);
    core::forget_lost(world, lost);  // left out, or replaced: a later loss is another process's
    core::Rejoined out{agreed.epoch, agreed.ranks(), nullptr};
    if (agreed.epoch != ctx.epoch) out.backend = connect_epoch(world, spec, out.members, out.epoch);
    return out;
  };
}

}  // namespace dist::real
