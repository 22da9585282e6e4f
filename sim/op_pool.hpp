// Recycles the fabric's ops: posting a call reuses an op that every owner has let go of, with its
// calls and arrival flags, instead of allocating and building a fresh one for every collective.
#pragma once

#include <cstddef>
#include <memory>

#include "sim/op.hpp"

namespace dist::sim {

class OpPool {
 public:
  OpPool();

  // An op for `participants` ranks in its initial state (gathering, nothing arrived): a recycled
  // one when there is one, else a new one. When its last owner lets go, it returns to the pool
  // (kept while the pool has room and is alive, else deleted).
  std::shared_ptr<Op> take(std::size_t participants);

  struct Shelf;  // the ops let go of, and their lock (op_pool.cpp)

 private:
  std::shared_ptr<Shelf> shelf_;  // shared with the ops' deleters, which may outlive the pool
};

}  // namespace dist::sim
