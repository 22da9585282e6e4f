// OpPool: ops whose last owner let go go back on a shelf, and are reset when taken again. The
// deleter runs on the thread that let go last, after every owner's release: the shelf's lock then
// hands the op over to the next taker.
#include "sim/op_pool.hpp"

#include "sim/spin.hpp"

#include <mutex>
#include <utility>
#include <vector>

namespace dist::sim {

struct OpPool::Shelf {
  static constexpr std::size_t capacity = 8;
  SpinLock mutex;  // held for a push or a pop
  std::vector<std::unique_ptr<Op>> ops;
};

namespace {
// Drops what a let-go op refers to (its split's communicator, error and plan). Done before the
// shelf's lock is taken: dropping a communicator may let go of further ops. Its own
// communicator stays: the next collective on it is likely to reuse the op, and a shelved op is
// in no communicator's lists, so it keeps no cycle alive (the shelf dies with the world).
void release_references(Op& op) {
  op.new_comm.reset();
  op.error = nullptr;
  op.plan = Plan{};
}

// Puts a shelved op back in the state of a new one for `participants` ranks, keeping the memory of
// its vectors.
void reset(Op& op, std::size_t participants) {
  op.id = 0;
  op.seq = 0;
  op.p2p = false;
  op.participants = {};
  op.pair = {};
  op.calls.resize(participants);  // stale calls stay: calls[i] is read only once arrived[i]
  op.arrived.assign(participants, 0);
  op.arrived_count = 0;
  op.state.store(Op::State::gathering, std::memory_order_relaxed);
  op.next_chunk.store(0, std::memory_order_relaxed);
  op.done_chunks.store(0, std::memory_order_relaxed);
}

struct ShelveOp {
  std::shared_ptr<OpPool::Shelf> shelf;
  void operator()(Op* raw) const {
    std::unique_ptr<Op> op(raw);
    release_references(*op);
    std::lock_guard lock(shelf->mutex);
    if (shelf->ops.size() < OpPool::Shelf::capacity) shelf->ops.push_back(std::move(op));
  }
};
}  // namespace

OpPool::OpPool() : shelf_(std::make_shared<Shelf>()) {}

std::shared_ptr<Op> OpPool::take(std::size_t participants) {
  std::unique_ptr<Op> op;
  {
    std::lock_guard lock(shelf_->mutex);
    if (!shelf_->ops.empty()) {
      op = std::move(shelf_->ops.back());
      shelf_->ops.pop_back();
    }
  }
  if (!op) op = std::make_unique<Op>();
  reset(*op, participants);
  return std::shared_ptr<Op>(op.release(), ShelveOp{shelf_});
}

}  // namespace dist::sim
