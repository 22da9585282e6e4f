// OpPool: ops whose last owner let go go back on a shelf, and are reset when taken again. The
// deleter runs on the thread that let go last, after every owner's release: a rank thread keeps
// the op on its own shelf (no lock, and its lines are likely still in that core's cache); any
// other thread puts it on the common shelf, under its lock.
#include "sim/op_pool.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/spin.hpp"

namespace dist::sim {

namespace {
constexpr std::size_t capacity = 8;  // ops kept per shelf
}  // namespace

// Ops kept by their participant count, so that a taken op's calls already fit (growing them
// reallocates, and in a large world glibc's large requests first consolidate every small chunk
// freed since). At most `slot_limit` calls in all are kept: memory stays within a few worlds'
// calls.
struct OpPool::Shelf {
  SpinLock mutex;  // held for a push or a pop
  // By calls.size(), the last kept first, linked through Op::shelved_next (owned here): a list
  // never grows a block, and a large world shelves thousands of one size at once.
  std::unordered_map<std::size_t, Op*> ops;
  std::size_t slots = 0;  // calls kept in all
  std::size_t slot_limit = 0;

  Shelf() = default;
  Shelf(const Shelf&) = delete;
  Shelf& operator=(const Shelf&) = delete;
  ~Shelf() {
    for (auto& [size, top] : ops)
      while (top) std::unique_ptr<Op>(std::exchange(top, top->shelved_next));
  }

  // Keeps `op` unless the limit is reached (then `op` stays the caller's, to delete).
  void push(std::unique_ptr<Op>& op) {
    const std::size_t n = op->calls.size();
    if (slots + n > slot_limit) return;
    slots += n;
    Op*& top = ops[n];
    op->shelved_next = top;
    top = op.release();
  }
  std::unique_ptr<Op> pop(std::size_t participants) {
    const auto it = ops.find(participants);
    if (it == ops.end() || !it->second) return nullptr;
    std::unique_ptr<Op> op(std::exchange(it->second, it->second->shelved_next));
    op->shelved_next = nullptr;
    slots -= participants;
    return op;
  }
};

struct alignas(64) OpPool::RankShelf {
  std::shared_ptr<Shelf> common;
  std::vector<std::unique_ptr<Op>> ops;  // touched only by the rank's thread
};

namespace {
// The rank shelf the calling thread is bound to (OpPool::bind), and its pool's common shelf.
struct Binding {
  const OpPool::Shelf* common = nullptr;
  OpPool::RankShelf* own = nullptr;
  std::size_t rank = 0;
};
thread_local Binding binding;
// A rank thread's retired ops (OpPool::retire); let go of when the thread ends at the latest.
struct Retired {
  std::array<std::shared_ptr<Op>, 4> ops;
  std::size_t next = 0;
};
thread_local Retired retired;

// Drops what a let-go op refers to (its split's communicator, error and plan). Done before the
// shelf's lock is taken: dropping a communicator may let go of further ops. Its own
// communicator stays: the next collective on it is likely to reuse the op, and a shelved op is
// in no communicator's lists, so it keeps no cycle alive (the shelf dies with the world).
void release_references(Op& op) {
  op.new_comm.reset();
  op.new_comms.clear();
  if (op.error) op.error = nullptr;
  if (op.plan.run) op.plan = Plan{};
}

// Writes `value` only when it differs: an unchanged line stays cached on every core.
template <class T> void set(T& field, const T& value) {
  if (field != value) field = value;
}

// Puts a shelved op back in the state of a new one for `participants` ranks, keeping the memory of
// its vectors.
void reset(Op& op, std::size_t participants) {
  set(op.id, std::uint64_t{0});
  set(op.p2p, false);
  set(op.any_source, false);
  set(op.source, -1);
  // participants stays: the poster sets it (when it differs)
  set(op.pair, std::array<int, 2>{});
  op.calls.resize(participants);  // stale calls stay: calls[i] is read only once arrived[i]
  op.state.store(Op::State::gathering, std::memory_order_relaxed);
  op.seq = 0;
  op.arrived.reset(participants);
  op.model_starts.clear();  // a chain's per-participant times (the predictor sets them anew)
  op.model_ends.clear();
  for (auto* counter : {&op.next_chunk, &op.done_chunks})
    if (counter->load(std::memory_order_relaxed) != 0) counter->store(0, std::memory_order_relaxed);
}

struct ShelveOp {
  std::shared_ptr<OpPool::RankShelf> taker;  // keeps the pool's shelves alive
  void operator()(Op* raw) const {
    std::unique_ptr<Op> op(raw);
    release_references(*op);
    if (binding.own && binding.common == taker->common.get()) {  // a rank thread of this pool
      auto& own = binding.own->ops;
      if (own.size() < capacity) {
        own.push_back(std::move(op));
        return;
      }
    }
    // Full shelves overflow to the common one, which ranks whose own is empty take from: one rank
    // may let go of most ops while another takes most.
    std::lock_guard lock(taker->common->mutex);
    taker->common->push(op);
  }
};
}  // namespace

void OpPool::retire(std::shared_ptr<Op>&& op) {
  if (!binding.common) return;  // not a rank thread: `op` is let go of by the caller
  auto& slot = retired.ops[retired.next];
  retired.next = (retired.next + 1) % retired.ops.size();
  slot = std::move(op);  // lets go of the oldest when no wait came since
}

void OpPool::release_retired() {
  for (auto& op : retired.ops) op.reset();
}

void OpPool::unbind() {
  release_retired();
  binding = {};
}

OpPool::OpPool(int ranks, bool one_at_a_time) : one_at_a_time_(one_at_a_time) {
  const auto common = std::make_shared<Shelf>();
  common->slot_limit = std::max<std::size_t>(512, 4 * static_cast<std::size_t>(ranks));
  // One rank running at a time has nothing to gain from shelves of its own (no core to stay on,
  // no lock to avoid), and the ops a rank let go of would wait there, cold, for its next take.
  const int shelves = one_at_a_time ? 1 : ranks;
  for (int r = 0; r < shelves; ++r) {
    ranks_.push_back(std::make_shared<RankShelf>());
    ranks_.back()->common = common;
  }
}

void OpPool::bind(int rank) {
  const auto r = static_cast<std::size_t>(rank);
  if (one_at_a_time_) {  // every rank uses the common shelf only
    binding = {ranks_.front()->common.get(), nullptr, 0};
    return;
  }
  binding = {ranks_.front()->common.get(), ranks_.at(r).get(), r};
}

std::shared_ptr<Op> OpPool::take(std::size_t participants) {
  std::unique_ptr<Op> op;
  RankShelf* own = binding.common == ranks_.front()->common.get() ? binding.own : nullptr;
  if (own && !own->ops.empty()) {
    op = std::move(own->ops.back());
    own->ops.pop_back();
  } else {
    Shelf& common = *ranks_.front()->common;
    std::lock_guard lock(common.mutex);
    op = common.pop(participants);
  }
  if (!op) op = std::make_unique<Op>();
  reset(*op, participants);
  // The deleter counts on the taker's shelf; takers without one (none in practice) use rank 0's.
  const auto& taker = own ? ranks_[binding.rank] : ranks_.front();
  return std::shared_ptr<Op>(op.release(), ShelveOp{taker});
}

}  // namespace dist::sim
