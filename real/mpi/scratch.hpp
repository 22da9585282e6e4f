// Scratch: the memory a collective or a message stages the caller's bytes in, owned by its Work
// until MPI completes. Two costs of a plain std::vector<std::byte> are left out:
// - zeroing: every byte MPI reads was copied in first, and every byte copied out MPI wrote;
// - fresh pages: a block of 64 KiB to 512 MiB goes back to a small process-wide pool (four blocks,
//   512 MiB in all) when its call completes, and the next call of a similar size takes it, instead
//   of mapping and faulting in new pages (glibc maps large blocks afresh each time and unmaps them
//   on free).
#pragma once

#include <cstddef>
#include <memory>

namespace dist::real {

class Scratch {
 public:
  Scratch() = default;
  explicit Scratch(std::size_t bytes);  // uninitialized
  Scratch(const Scratch& other);        // a copy of its bytes
  Scratch& operator=(const Scratch& other);
  Scratch(Scratch&& other) noexcept;
  Scratch& operator=(Scratch&& other) noexcept;
  ~Scratch() { clear(); }

  std::byte* data() const { return block_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear();  // gives the block back (to the pool when it is large enough to keep)

 private:
  std::unique_ptr<std::byte[]> block_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  // of block_, which may be a larger pooled one
};

// The pool's figures, for tests: blocks kept and their bytes.
struct ScratchPoolStats {
  std::size_t blocks = 0;
  std::size_t bytes = 0;
};
ScratchPoolStats scratch_pool_stats();

}  // namespace dist::real
