// Recycles the fabric's ops: posting a call reuses an op that every owner has let go of, with its
// calls and arrival flags, instead of allocating and building a fresh one for every collective.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "sim/op.hpp"

namespace dist::sim {

class OpPool {
 public:
  // `one_at_a_time`: the ranks never run at once (deterministic mode), and all share one shelf.
  OpPool(int ranks, bool one_at_a_time);

  // Binds the calling thread to rank `rank`'s own shelf (World::enter): the ops it lets go of last
  // wait there, without a lock, for its next take, so a rank's op seldom changes cores.
  void bind(int rank);
  // An op for `participants` ranks in its initial state (gathering, nothing arrived): a recycled
  // one when there is one, else a new one. When its last owner lets go, it returns to the pool
  // (kept while the pool has room and is alive, else deleted).
  std::shared_ptr<Op> take(std::size_t participants);

  // Keeps a completed op a rank thread is done with (its Work went away) instead of letting go of
  // it at once: letting go changes a count the op's other participants changed last, a cache
  // miss, and release_retired() does that while the rank waits anyway. Any other thread lets go
  // at once.
  static void retire(std::shared_ptr<Op>&& op);
  static void release_retired();
  // Lets go of the calling thread's retired ops and its binding: a thread that ran fiber ranks
  // outlives the pool.
  static void unbind();

  struct Shelf;      // the ops let go of by unbound threads, and their lock (op_pool.cpp)
  struct RankShelf;  // one rank's (op_pool.cpp)

 private:
  // Each on a cache line of its own, shared with the deleters of the ops its rank took (an op's
  // deleter counts a reference on its taker's shelf, which may outlive the pool).
  std::vector<std::shared_ptr<RankShelf>> ranks_;  // one only when one_at_a_time_
  bool one_at_a_time_;
};

}  // namespace dist::sim
