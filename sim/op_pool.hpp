// Recycles the fabric's ops: posting a call reuses an op that nobody references any more, with its
// calls and arrival flags, instead of allocating a fresh one for every collective.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "sim/op.hpp"

namespace dist::sim {

class OpPool {
 public:
  // An op for `participants` ranks in its initial state (gathering, nothing arrived): a pooled one
  // that only the pool still holds, else a new one (kept for reuse while the pool has room).
  // Called under the world's lock.
  std::shared_ptr<Op> take(std::size_t participants);

 private:
  static constexpr std::size_t capacity = 8;
  std::vector<std::shared_ptr<Op>> ops_;
};

}  // namespace dist::sim
