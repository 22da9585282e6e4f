// The device buffers of one nccl operation: device data is used in place; host data is copied to
// fresh device memory (stream-ordered cudaMallocAsync on the communicator's stream) and, for
// results, copied back when the operation's Work completes, as MMEngine stages cpu tensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/backend_impl.hpp"
#include "real/nccl/communicator.hpp"
#include "real/nccl/work.hpp"

namespace dist::real {

class Staging {
 public:
  Staging(std::shared_ptr<Communicator> comm, Operation op);
  ~Staging();  // frees what was allocated when the operation never reached its Work
  Staging(const Staging&) = delete;
  Staging(Staging&&) noexcept = default;  // the moved-from one owns nothing (empty vectors)
  Staging& operator=(const Staging&) = delete;

  // A device pointer holding `b`'s elements (b itself on the device; else a staged copy).
  const void* input(const core::ConstBuf& b);
  // The same for a buffer the call may write (reduce's on ranks other than the root).
  void* input(const core::Buf& b);
  // A device pointer whose contents end up in `b` when the Work completes; with `initialise`
  // it starts with b's current contents (in-place operations).
  void* output(const core::Buf& b, bool initialise);
  // Device scratch memory of `bytes`, freed after the operation.
  void* scratch(std::size_t bytes);

  const Operation& operation() const { return op_; }
  Communicator& comm() { return *comm_; }
  // Records the operation's completion event and hands the copies and frees to its Work.
  Work finish();

 private:
  void* allocate(std::size_t bytes);
  void* stage_in(const core::ConstBuf& b);

  std::shared_ptr<Communicator> comm_;
  Operation op_;
  bool stream_idle_ = false;  // waited once before the first pageable host copy
  std::vector<CopyBack> copies_;
  std::vector<void*> memory_;
};

}  // namespace dist::real
