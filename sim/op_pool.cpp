// OpPool: reuse of ops whose every other owner (ranks' Works, the fabric) has let go.
#include "sim/op_pool.hpp"

#include <atomic>

namespace dist::sim {

namespace {
// Puts a used op back in the state of a new one for `participants` ranks, keeping the memory of
// its vectors.
void reset(Op& op, std::size_t participants) {
  op.comm.reset();
  op.id = 0;
  op.seq = 0;
  op.p2p = false;
  op.participants = {};
  op.pair = {};
  op.calls.resize(participants);
  for (Call& c : op.calls) c = Call{};
  op.arrived.assign(participants, 0);
  op.arrived_count = 0;
  op.state.store(Op::State::gathering, std::memory_order_relaxed);
  op.error = nullptr;
  op.plan = Plan{};
  op.next_chunk.store(0, std::memory_order_relaxed);
  op.done_chunks.store(0, std::memory_order_relaxed);
  op.new_comm.reset();
}
}  // namespace

std::shared_ptr<Op> OpPool::take(std::size_t participants) {
  for (const auto& op : ops_) {
    if (op.use_count() != 1) continue;
    // The last other owner let go with a release decrement: its uses of the op happen before.
    std::atomic_thread_fence(std::memory_order_acquire);
    reset(*op, participants);
    return op;
  }
  auto op = std::make_shared<Op>();
  op->calls.resize(participants);
  op->arrived.assign(participants, 0);
  if (ops_.size() < capacity) ops_.push_back(op);
  return op;
}

}  // namespace dist::sim
