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

// A guard region below each stack; or none: without guards, stacks are packed one after another,
// each a canary line at its bottom, in the top page of the stack below (see map_slab).
std::size_t FiberStacks::step() const { return guarded_ ? size_ + guard_bytes : size_; }

FiberStacks::~FiberStacks() {
  for (const auto& [base, bytes] : slabs_) munmap(base, bytes);
}

// Without guard regions, a page leads the slab and each stack starts a canary line below a page
// boundary: its canary shares the top page of the stack below, and its own top ends a line below
// the next boundary (where the next stack's canary is). A rank touches no page for its canary
// alone, the check finds that page in the TLB (the rank below ran just before), and a stack of
// depth d touches the pages of d bytes below a page boundary: fewer pages per rank than stacks
// shifted a line each.
void FiberStacks::map_slab() {
  const std::size_t lead = guarded_ ? 0 : page_;
  const std::size_t bytes = lead + step() * per_slab_;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  auto* base = static_cast<std::byte*>(mapped);
  slabs_.emplace_back(base, bytes);
  // Handed out from the top, so the first stacks are the first taken.
  for (std::size_t i = per_slab_; i-- > 0;) {
    std::byte* at = base + lead + i * step();
    if (guarded_ && mprotect(at, guard_bytes, PROT_NONE) != 0) throw std::bad_alloc();
    if (guarded_) free_.push_back({at + guard_bytes, size_});
    else free_.push_back({at - canary_bytes, size_});
  }
}

FiberStacks::Stack FiberStacks::take() {
  if (free_.empty()) map_slab();
  Stack stack = free_.back();
  free_.pop_back();
  if (!guarded_) {  // in the top page of the stack below
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
