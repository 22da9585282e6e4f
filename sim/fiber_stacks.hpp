// The stacks of fiber ranks: carved from large mappings (a pool, reused as fibers end), each with a
// guard region below it while the process's map limit allows one per stack, else a canary at its
// bottom checked whenever the rank switches out, so an overflow is reported instead of silently
// corrupting the neighbouring rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dist::sim {

class FiberStacks {
 public:
  // The default stack of a fiber rank (Cluster::stack_size = 0).
  static constexpr std::size_t default_size = 256 * 1024;
  // The stack a fiber rank gets for Cluster::stack_size = `asked` (0: the default).
  static constexpr std::size_t size_for(std::size_t asked) { return asked ? asked : default_size; }

  // Stacks of `size` bytes (rounded up to pages) for up to `ranks` fibers alive at once.
  FiberStacks(std::size_t ranks, std::size_t size);
  ~FiberStacks();
  FiberStacks(const FiberStacks&) = delete;
  FiberStacks& operator=(const FiberStacks&) = delete;

  struct Stack {
    std::byte* bottom = nullptr;  // lowest address (the canary's, without guard regions)
    std::size_t size = 0;         // bytes from `bottom` to the top (the canary's line included)
    std::byte* top() const { return bottom + size; }
  };
  // A stack from the pool; throws std::bad_alloc when no memory can be mapped.
  Stack take();
  void give_back(Stack stack);

  bool guarded() const { return guarded_; }
  std::size_t stack_size() const { return size_; }
  // Whether `stack`'s canary is intact (always, with guard regions).
  bool intact(const Stack& stack) const;
  // Starts loading `stack`'s canary (nothing with guard regions), for an intact() to come.
  void prefetch_canary(const Stack& stack) const {
    if (!guarded_) __builtin_prefetch(stack.bottom);
  }
  // How the stacks are protected (guard regions, or why there are none), for the overflow message.
  std::string protection() const;

 private:
  void map_slab();
  std::size_t step() const;  // from one stack's start to the next one's in a slab

  std::size_t size_;
  std::size_t page_;
  bool guarded_;
  std::size_t per_slab_;
  std::vector<std::pair<std::byte*, std::size_t>> slabs_;  // mappings, for munmap
  std::vector<Stack> free_;
};

}  // namespace dist::sim
