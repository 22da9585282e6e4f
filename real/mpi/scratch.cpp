// The scratch pool: at most pooled_blocks blocks of at least pooled_from bytes, pooled_bytes in
// all (the oldest go first; a larger block is not kept); a request takes the smallest kept block
// that holds it if that block is at most twice the request (a 64 MiB block does not serve a 64 KiB
// call), else a new block.
#include "real/mpi/scratch.hpp"

#include <array>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace dist::real {

namespace {
constexpr std::size_t pooled_from = std::size_t{64} << 10;
constexpr std::size_t pooled_bytes = std::size_t{512} << 20;
constexpr std::size_t pooled_blocks = 4;

struct Kept {
  std::unique_ptr<std::byte[]> block;
  std::size_t capacity = 0;
};

struct Pool {
  Pool() { kept.reserve(pooled_blocks); }  // give_back allocates nothing
  std::mutex mutex;
  std::vector<Kept> kept;  // at most pooled_blocks, oldest first
  std::size_t bytes = 0;   // their capacities
};

// Never destroyed: Works given up at exit (abandon) free their scratch after static destructors.
Pool& pool() {
  static Pool* const p = new Pool;
  return *p;
}

std::unique_ptr<std::byte[]> take(std::size_t bytes, std::size_t& capacity) {
  if (bytes >= pooled_from && bytes <= pooled_bytes) {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    auto best = p.kept.end();
    for (auto it = p.kept.begin(); it != p.kept.end(); ++it)
      if (it->capacity >= bytes && it->capacity / 2 <= bytes &&
          (best == p.kept.end() || it->capacity < best->capacity))
        best = it;
    if (best != p.kept.end()) {
      auto block = std::move(best->block);
      capacity = best->capacity;
      p.bytes -= capacity;
      p.kept.erase(best);
      return block;
    }
  }
  capacity = bytes;
  return std::make_unique_for_overwrite<std::byte[]>(bytes);
}

void give_back(std::unique_ptr<std::byte[]> block, std::size_t capacity) {
  if (capacity < pooled_from || capacity > pooled_bytes) return;
  Pool& p = pool();
  std::array<std::unique_ptr<std::byte[]>, pooled_blocks> dropped;  // freed outside the lock
  std::size_t drops = 0;
  std::lock_guard lock(p.mutex);
  while (p.kept.size() == pooled_blocks || p.bytes + capacity > pooled_bytes) {  // oldest first
    dropped[drops++] = std::move(p.kept.front().block);
    p.bytes -= p.kept.front().capacity;
    p.kept.erase(p.kept.begin());
  }
  p.bytes += capacity;
  p.kept.push_back({std::move(block), capacity});
}
}  // namespace

Scratch::Scratch(std::size_t bytes) : size_(bytes) {
  if (bytes > 0) block_ = take(bytes, capacity_);
}

Scratch::Scratch(const Scratch& other) : Scratch(other.size_) {
  if (size_ > 0) std::memcpy(block_.get(), other.block_.get(), size_);
}

Scratch& Scratch::operator=(const Scratch& other) {
  if (this != &other) *this = Scratch(other);
  return *this;
}

Scratch::Scratch(Scratch&& other) noexcept
    : block_(std::move(other.block_)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

Scratch& Scratch::operator=(Scratch&& other) noexcept {
  if (this != &other) {
    clear();
    block_ = std::move(other.block_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void Scratch::clear() {
  if (block_) give_back(std::move(block_), capacity_);
  size_ = capacity_ = 0;
}

ScratchPoolStats scratch_pool_stats() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  ScratchPoolStats s;
  s.blocks = p.kept.size();
  s.bytes = p.bytes;
  return s;
}

}  // namespace dist::real
