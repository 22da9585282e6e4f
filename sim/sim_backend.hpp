// The sim backend: one object per rank per communicator, posting calls into the World's fabric.
// Every collective but all_to_all_v is native here, one matched op; all_to_all_v keeps
// BackendImpl's default, composed of sends and receives (each its own matched op).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/backend_impl.hpp"
#include "sim/world.hpp"

namespace dist::sim {

class SimBackend final : public core::BackendImpl {
 public:
  SimBackend(World& world, std::shared_ptr<Communicator> comm, int group_rank);

  dist::Backend kind() const override { return dist::Backend::sim; }
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(comm_->members.size()); }

  Work all_reduce(core::Buf data, ReduceOp op) override;
  Work broadcast(core::Buf data, int root) override;
  Work all_gather(core::Buf output, core::ConstBuf input) override;
  Work send(core::ConstBuf data, int dst, int tag) override;
  Work recv(core::Buf data, int src, int tag) override;
  bool receives_from_any_source() const override { return true; }
  std::shared_ptr<core::BackendImpl> split_groups(const core::Layout& layout) override;
  Work barrier() override;
  // One barrier op (Op::waits_to_timeout) waited with the timeout: the members that had not arrived
  // by then are named.
  void monitored_barrier(std::chrono::milliseconds timeout, bool wait_all_ranks) override;
  // new_group's timeout option: this group's waits end at it (the run's timeout when longer).
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  std::shared_ptr<core::BackendImpl> split(const std::vector<int>& ranks) override;
  std::shared_ptr<core::BackendImpl> split_local(const std::vector<int>& ranks) override;
  // Recovery: sim aborts (World::abort) and shrinks (split_local) any group.
  std::string recovery_refusal() const override { return {}; }
  void abort(const std::exception_ptr& why) override;
  // The survivors meet at one communicator per shrink of this group (World::shrunk_comm), where a
  // list that differs from the first survivor's is a DesyncError.
  std::shared_ptr<core::BackendImpl> shrink(const std::vector<int>& survivors,
                                            std::optional<std::chrono::milliseconds> timeout,
                                            bool abort_parent) override;
  // The communicator's members, shared with it (an aliasing pointer that keeps it alive).
  std::shared_ptr<const std::vector<int>> shared_members() const override {
    return {comm_, &comm_->members};
  }

  World& world() const { return world_; }

  Work reduce(core::Buf data, ReduceOp op, int root) override;
  Work gather(core::Buf output, core::ConstBuf input, int root) override;
  Work scatter(core::Buf output, core::ConstBuf input, int root) override;
  Work reduce_scatter(core::Buf output, core::ConstBuf input, ReduceOp op) override;
  Work all_to_all(core::Buf output, core::ConstBuf input) override;
  Work all_gather_v(core::Buf output, core::ConstBuf input,
                    std::span<const std::size_t> counts) override;

 private:
  Work post(Call&& call);
  Work post_p2p(Call&& call);
  std::shared_ptr<core::BackendImpl> member_of(const std::shared_ptr<Communicator>& comm);

  World& world_;
  std::shared_ptr<Communicator> comm_;
  int rank_;
  int global_rank_;
  std::optional<std::chrono::milliseconds> timeout_;
  std::map<std::vector<int>, int> local_splits_;  // split_local's groups so far, per list
  int shrinks_ = 0;                               // shrink's groups so far
};

}  // namespace dist::sim
