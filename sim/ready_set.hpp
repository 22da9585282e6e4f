// The deterministic scheduler's set of ranks that can run: a Fenwick tree over the ranks, so
// adding, removing, counting the ready ranks below one and picking the k-th ready rank in rank
// order cost O(log ranks), not a scan of the world at every switch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dist::sim {

class ReadySet {
 public:
  explicit ReadySet(int ranks) : in_(static_cast<std::size_t>(ranks), 0), tree_(in_.size() + 1) {
    for (top_ = 1; top_ * 2 <= in_.size(); top_ *= 2) {
    }
  }

  // Marks `rank` ready or not; a no-op when it already is.
  void set(int rank, bool ready) {
    auto& flag = in_[static_cast<std::size_t>(rank)];
    if (static_cast<bool>(flag) == ready) return;
    flag = ready ? 1 : 0;
    const int delta = ready ? 1 : -1;
    for (std::size_t i = static_cast<std::size_t>(rank) + 1; i < tree_.size(); i += i & (~i + 1))
      tree_[i] += delta;
    count_ += static_cast<std::size_t>(delta);
  }
  bool contains(int rank) const { return in_[static_cast<std::size_t>(rank)] != 0; }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

  // How many ready ranks are below `rank` (so kth(below(r)) is the first ready rank >= r).
  std::size_t below(int rank) const {
    std::size_t n = 0;
    for (std::size_t i = static_cast<std::size_t>(rank); i > 0; i -= i & (~i + 1))
      n += static_cast<std::size_t>(tree_[i]);
    return n;
  }
  // The k-th ready rank in rank order (k < size()).
  int kth(std::size_t k) const {
    std::size_t at = 0;
    for (std::size_t step = top_; step > 0; step /= 2) {
      const std::size_t next = at + step;
      if (next < tree_.size() && static_cast<std::size_t>(tree_[next]) <= k) {
        at = next;
        k -= static_cast<std::size_t>(tree_[next]);
      }
    }
    return static_cast<int>(at);  // 1-based position at + 1, i.e. rank `at`
  }

 private:
  std::vector<std::uint8_t> in_;
  std::vector<std::int32_t> tree_;  // 1-based Fenwick tree of `in_`
  std::size_t count_ = 0;
  std::size_t top_ = 1;  // the highest power of two <= ranks
};

}  // namespace dist::sim
