// SimBackend: each Backend operation becomes a Call posted to the fabric; Work waits on the Op.
#include "sim/sim_backend.hpp"

#include <type_traits>

#include "core/work_state.hpp"
#include "sim/op_pool.hpp"

namespace dist::sim {

namespace {
class SimWork final : public dist::detail::WorkState {
 public:
  // `limit`: the group's own timeout (new_group's option), when it has one.
  // `group`: the backend a collective was called on (null for p2p).
  SimWork(World& world, int rank, std::shared_ptr<Op> op,
          std::optional<std::chrono::milliseconds> limit, const void* group = nullptr)
      : world_(world), rank_(rank), op_(std::move(op)), limit_(limit), group_(group) {}
  SimWork(const SimWork&) = delete;
  SimWork& operator=(const SimWork&) = delete;
  ~SimWork() override {
    if (op_->state.load(std::memory_order_acquire) == Op::State::done) OpPool::retire(std::move(op_));
  }
  // The rank's buffers are going: the op fails for every peer if it is still gathering, else it
  // runs to its end first (World::abandon), so no peer reads or writes them afterwards.
  void abandon() noexcept override {
    if (op_->state.load(std::memory_order_acquire) != Op::State::done) world_.abandon(rank_, op_);
  }
  void wait() override {
    aborted_or([&] { world_.wait(rank_, op_, limit_); });
  }
  // The caller's own timeout is waited out, as torch's is: a call that can never complete raises
  // TimeoutError at that timeout, not DeadlockError (the caller expects it may not complete).
  void wait_for(std::chrono::milliseconds timeout) override {
    aborted_or([&] { world_.wait(rank_, op_, within(limit_, timeout), true); });
  }
  bool is_completed() override {
    return aborted_or([&] { return world_.test(rank_, op_); });
  }
  // Read once complete (Work::source), after the matching send wrote it.
  int source() const override { return op_->p2p && op_->pair[1] == rank_ ? op_->source : -1; }
  const void* collective_of() const override { return group_; }
  std::string describe() const override {
    return op_->describe(static_cast<std::size_t>(op_->index_of(rank_)));
  }

 private:
  // A call this rank's dist::abort ended (World::abort) raises Aborted on this rank, not the
  // RankFailure naming it that its peers get.
  template <class F>
  std::invoke_result_t<F&> aborted_or(F&& f) {
    try {
      return f();
    } catch (const RankFailure&) {
      std::string why;
      {
        std::lock_guard gate(op_->comm->gathering.gate);
        if (const std::string* reason = op_->comm->aborted_reason(rank_)) why = *reason;
      }
      if (!why.empty()) throw Aborted(describe() + ": " + why);
      throw;
    }
  }

  World& world_;
  int rank_;
  std::shared_ptr<Op> op_;
  std::optional<std::chrono::milliseconds> limit_;
  const void* group_;
};

// A call moving `count` elements of `dtype` (the dtype every rank's call must agree on).
Call data_call(OpKind kind, DType dtype, const core::Buf& out, const core::ConstBuf& in,
               std::size_t count) {
  Call c;
  c.kind = kind;
  c.dtype = dtype;
  c.count = count;
  c.in = in.data;
  c.out = out.data;
  return c;
}
}  // namespace

SimBackend::SimBackend(World& world, std::shared_ptr<Communicator> comm, int group_rank)
    : world_(world),
      comm_(std::move(comm)),
      rank_(group_rank),
      global_rank_(comm_->members[static_cast<std::size_t>(group_rank)]) {}

Work SimBackend::post(Call&& call) {
  // barrier() on this group completes it first
  return Work(std::make_shared<SimWork>(
      world_, global_rank_, world_.post_collective(comm_, rank_, std::move(call)), timeout_, this));
}

Work SimBackend::post_p2p(Call&& call) {
  return Work(std::make_shared<SimWork>(world_, global_rank_,
                                        world_.post_p2p(comm_, rank_, std::move(call)), timeout_));
}

Work SimBackend::all_reduce(core::Buf data, ReduceOp op) {
  Call c = data_call(OpKind::all_reduce, data.dtype, data, data, data.count);
  c.op = op;
  return post(std::move(c));
}

Work SimBackend::broadcast(core::Buf data, int root) {
  Call c = data_call(OpKind::broadcast, data.dtype, data, data, data.count);
  c.root_or_peer = root;
  return post(std::move(c));
}

Work SimBackend::reduce(core::Buf data, ReduceOp op, int root) {
  Call c = data_call(OpKind::reduce, data.dtype, data, data, data.count);
  c.op = op;
  c.root_or_peer = root;
  return post(std::move(c));
}

Work SimBackend::all_gather(core::Buf output, core::ConstBuf input) {
  return post(data_call(OpKind::all_gather, input.dtype, output, input, input.count));
}

Work SimBackend::gather(core::Buf output, core::ConstBuf input, int root) {
  Call c = data_call(OpKind::gather, input.dtype, output, input, input.count);
  c.root_or_peer = root;
  return post(std::move(c));
}

Work SimBackend::scatter(core::Buf output, core::ConstBuf input, int root) {
  Call c = data_call(OpKind::scatter, output.dtype, output, input, output.count);
  c.root_or_peer = root;
  return post(std::move(c));
}

Work SimBackend::reduce_scatter(core::Buf output, core::ConstBuf input, ReduceOp op) {
  Call c = data_call(OpKind::reduce_scatter, output.dtype, output, input, output.count);
  c.op = op;
  return post(std::move(c));
}

Work SimBackend::all_to_all(core::Buf output, core::ConstBuf input) {
  return post(data_call(OpKind::all_to_all, input.dtype, output, input,
                        input.count / static_cast<std::size_t>(size())));
}

Work SimBackend::all_gather_v(core::Buf output, core::ConstBuf input,
                              std::span<const std::size_t> counts) {
  Call c = data_call(OpKind::all_gather_v, input.dtype, output, input, output.count);
  c.counts.assign(counts.begin(), counts.end());
  return post(std::move(c));
}

Work SimBackend::send(core::ConstBuf data, int dst, int tag) {
  Call c = data_call(OpKind::send, data.dtype, core::Buf{}, data, data.count);
  c.root_or_peer = dst;
  c.tag = tag;
  return post_p2p(std::move(c));
}

Work SimBackend::recv(core::Buf data, int src, int tag) {
  Call c = data_call(OpKind::recv, data.dtype, data, core::ConstBuf{}, data.count);
  c.root_or_peer = src;
  c.tag = tag;
  return post_p2p(std::move(c));
}

Work SimBackend::barrier() {
  Call c;
  c.kind = OpKind::barrier;
  return post(std::move(c));
}

void SimBackend::monitored_barrier(std::chrono::milliseconds timeout, bool wait_all_ranks) {
  Call c;
  c.kind = OpKind::barrier;
  c.tag = monitored_barrier_tag;
  const auto op = world_.post_collective(comm_, rank_, std::move(c));
  try {
    world_.wait(global_rank_, op, within(timeout_, timeout), true);
  } catch (const Error&) {
    std::vector<int> missing;
    {
      std::lock_guard gate(comm_->gathering.gate);  // late arrivals may still be coming
      missing = op->missing();
    }
    if (missing.empty()) throw;
    throw core::monitored_barrier_timeout(missing, wait_all_ranks, timeout);
  }
}

std::shared_ptr<core::BackendImpl> SimBackend::split(const std::vector<int>& ranks) {
  Call c;
  c.kind = OpKind::split;
  c.split_ranks = std::make_shared<const std::vector<int>>(ranks);
  auto op = world_.post_collective(comm_, rank_, std::move(c));
  world_.wait(global_rank_, op);
  return member_of(op->new_comm);
}

void SimBackend::abort(const std::exception_ptr& why) {
  world_.abort(global_rank_, comm_, core::abort_text(why));
}

// The members meet at the communicator the first of them made (World::local_comm): no op.
std::shared_ptr<core::BackendImpl> SimBackend::split_local(const std::vector<int>& ranks) {
  const int k = local_splits_[ranks]++;
  return member_of(world_.local_comm(comm_, ranks, k));
}

std::shared_ptr<core::BackendImpl> SimBackend::shrink(
    const std::vector<int>& survivors, std::optional<std::chrono::milliseconds> timeout, bool) {
  auto backend = member_of(world_.shrunk_comm(comm_, survivors, shrinks_++, global_rank_));
  if (backend) static_cast<SimBackend&>(*backend).timeout_ = timeout ? timeout : timeout_;
  return backend;
}

// This rank's backend on `comm`, a communicator a split made; null when it is not a member.
std::shared_ptr<core::BackendImpl> SimBackend::member_of(
    const std::shared_ptr<Communicator>& comm) {
  if (!comm) return nullptr;
  const int at = comm->group_rank_of(global_rank_);
  if (at < 0) return nullptr;
  return std::make_shared<SimBackend>(world_, comm, at);
}

// Each participant brings only its own list (the layout's hash is compared as the call's lists).
std::shared_ptr<core::BackendImpl> SimBackend::split_groups(const core::Layout& layout) {
  Call c;
  c.kind = OpKind::split_groups;
  c.lists_hash = layout.hash;
  c.split_ranks = world_.shared_rank_list(layout);
  auto op = world_.post_collective(comm_, rank_, std::move(c));
  world_.wait(global_rank_, op);
  return member_of(op->new_comms.at(static_cast<std::size_t>(rank_)));
}

}  // namespace dist::sim
