// The nccl backend: core::BackendImpl over one NCCL communicator per group, one stream per
// communicator, a CUDA event behind each Work. Buffers on the communicator's GPU are used in
// place; host buffers are staged through device memory and copied back (staging.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend_impl.hpp"
#include "core/calls/call.hpp"
#include "real/nccl/communicator.hpp"
#include "real/nccl/mapping.hpp"
#include "real/nccl/operation.hpp"
#include "real/nccl/staging.hpp"

namespace dist::real {

class NcclBackend final : public core::BackendImpl {
 public:
  explicit NcclBackend(std::shared_ptr<Communicator> comm) : comm_(std::move(comm)) {}

  dist::Backend kind() const override { return dist::Backend::nccl; }
  int rank() const override { return comm_->spec().rank; }
  int size() const override { return comm_->size(); }
  Device device() const override { return Device::cuda(comm_->spec().device); }
  bool reaches(Device where) const override { return nccl_reaches(device(), where); }

  Work all_reduce(core::Buf data, ReduceOp op) override;
  Work broadcast(core::Buf data, int root) override;
  Work all_gather(core::Buf output, core::ConstBuf input) override;
  Work send(core::ConstBuf data, int dst, int tag) override;
  Work recv(core::Buf data, int src, int tag) override;
  Work barrier() override;
  std::shared_ptr<core::BackendImpl> split(const std::vector<int>& ranks) override;
  // The group's communicator (the device tests abort it to check what Works report then).
  Communicator& communicator() { return *comm_; }
  // dist::abort: ncclCommAbort on the group's communicator (Communicator::abort, on a helper
  // thread, bounded): its pending Works and later calls raise Aborted.
  std::string recovery_refusal() const override { return {}; }
  void abort(const std::exception_ptr& why) override;
  // shrink_group: ncclCommShrink by the survivors alone (Communicator::shrink); with abort_parent
  // its NCCL_SHRINK_ABORT ends this group's pending operations first. A group dist::abort ended
  // has no communicator left to shrink: null, and the survivors connect anew.
  bool shrink_aborts_parent() const override { return true; }
  std::shared_ptr<core::BackendImpl> shrink(const std::vector<int>& survivors,
                                            std::optional<std::chrono::milliseconds> timeout,
                                            bool abort_parent) override;

  Work reduce(core::Buf data, ReduceOp op, int root) override;
  Work gather(core::Buf output, core::ConstBuf input, int root) override;
  Work scatter(core::Buf output, core::ConstBuf input, int root) override;
  Work reduce_scatter(core::Buf output, core::ConstBuf input, ReduceOp op) override;
  Work all_to_all(core::Buf output, core::ConstBuf input) override;
  Work all_to_all_v(core::Buf output, core::ConstBuf input,
                    std::span<const std::size_t> output_counts,
                    std::span<const std::size_t> input_counts) override;
  Work all_gather_v(core::Buf output, core::ConstBuf input,
                    std::span<const std::size_t> counts) override;

 private:
  // Starts collective #n of this group (the collective counter, see operation.hpp): checks the
  // communicator and names the call.
  Staging begin(core::CallKind kind);
  // Starts p2p call #n ("send", "recv") with group rank `peer`; collectives keep their numbers.
  Staging begin_p2p(const char* kind, int peer);
  // Reduces `count` elements from `in` into `out` on every rank (root < 0) or on `root`.
  void reduction(Staging& s, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                 int root);
  // The integer division / bitwise fold on the device (kernels.hpp), on this group's stream.
  void device_finish(Staging& s, DType dtype, void* out, const void* in, std::size_t count,
                     int slices, std::size_t stride, kernels::Fold fold, long long divisor);
  // Runs `body` (ncclSend/ncclRecv/... calls) between ncclGroupStart and ncclGroupEnd.
  template <class F> void grouped(Staging& s, F&& body);
  void copy_on_device(Staging& s, void* dst, const void* src, std::size_t bytes);

  std::shared_ptr<Communicator> comm_;
  OperationCounter counter_;
};

// The element `index` of a buffer of `dtype` starting at `base`.
inline void* element(void* base, std::size_t index, DType dtype) {
  return static_cast<std::byte*>(base) + index * dtype_size(dtype);
}
inline const void* element(const void* base, std::size_t index, DType dtype) {
  return static_cast<const std::byte*>(base) + index * dtype_size(dtype);
}

// Whether the `bytes` starting at `a` and those starting at `b` share memory (in-place calls).
inline bool overlaps(const void* a, const void* b, std::size_t bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return bytes > 0 && x < y + bytes && y < x + bytes;
}

}  // namespace dist::real
