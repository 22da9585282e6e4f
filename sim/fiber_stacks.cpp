// FiberStacks: slabs of stacks mapped with MAP_NORESERVE (only the pages a rank touches are
// committed), a guard region below each when vm.max_map_count leaves room for one mapping split
// per stack, else a canary at each stack's bottom.
#include "sim/fiber_stacks.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <utility>

namespace dist::sim {

namespace {
constexpr std::size_t canary_bytes = 64;  // one cache line
constexpr std::uint64_t canary_word = 0xdead57acc0ffee11ull;
constexpr std::size_t slab_bytes = std::size_t{64} << 20;  // stacks are carved 64 MiB at a time
constexpr std::size_t maps_reserved = 4096;                // mappings left for everything else
// The guard below each stack: address space only (one mapping whatever its size), wide enough
// that a large frame of code built without -fstack-clash-protection lands in it.
constexpr std::size_t guard_bytes = 256 * 1024;

std::size_t read_count(const char* path) {
  std::ifstream in(path);
  std::size_t value = 0;
  in >> value;
  return value;
}

std::size_t maps_in_use() {
  std::ifstream in("/proc/self/maps");
  return static_cast<std::size_t>(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}
}  // namespace

FiberStacks::FiberStacks(std::size_t ranks, std::size_t size)
    : page_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))) {
  size_ = (std::max(size, 4 * page_) + page_ - 1) / page_ * page_;
  // A guard region splits a slab's mapping in two per stack.
  const std::size_t limit = read_count("/proc/sys/vm/max_map_count");
  guarded_ = limit > 0 && maps_in_use() + 2 * ranks + maps_reserved < limit;
  per_slab_ = std::clamp<std::size_t>(slab_bytes / step(), 1, std::max<std::size_t>(ranks, 1));
}

// A guard region below each stack; or the canary's line, so that a stack's top and the canary of
// the stack above it share a page: a rank touches no page for its canary alone (one page less
// per rank, and the check finds that page in the TLB: the rank below ran just before).
std::size_t FiberStacks::step() const {
  return guarded_ ? size_ + guard_bytes : size_ + canary_bytes;
}

FiberStacks::~FiberStacks() {
  for (const auto& [base, bytes] : slabs_) munmap(base, bytes);
}

void FiberStacks::map_slab() {
  const std::size_t bytes = step() * per_slab_;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  auto* base = static_cast<std::byte*>(mapped);
  slabs_.emplace_back(base, bytes);
  // Handed out from the top, so the first stacks are the first taken.
  for (std::size_t i = per_slab_; i-- > 0;) {
    std::byte* at = base + i * step();
    if (guarded_ && mprotect(at, guard_bytes, PROT_NONE) != 0) throw std::bad_alloc();
    if (guarded_) free_.push_back({at + guard_bytes, size_});
    else free_.push_back({at, size_ + canary_bytes});
  }
}

FiberStacks::Stack FiberStacks::take() {
  if (free_.empty()) map_slab();
  Stack stack = free_.back();
  free_.pop_back();
  if (!guarded_) {  // on the page of the top of the stack below
    auto* words = reinterpret_cast<std::uint64_t*>(stack.bottom);
    std::fill(words, words + canary_bytes / sizeof(std::uint64_t), canary_word);
  }
  return stack;
}

void FiberStacks::give_back(Stack stack) { free_.push_back(stack); }

bool FiberStacks::intact(const Stack& stack) const {
  if (guarded_) return true;
  const auto* words = reinterpret_cast<const std::uint64_t*>(stack.bottom);
  return std::all_of(words, words + canary_bytes / sizeof(std::uint64_t),
                     [](std::uint64_t w) { return w == canary_word; });
}

std::string FiberStacks::protection() const {
  if (guarded_) return "a guard region below each stack";
  return "no guard regions (vm.max_map_count is too low for one per rank), a canary at each "
         "stack's bottom checked at every switch";
}

}  // namespace dist::sim
