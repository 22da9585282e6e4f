// NcclBackend's collectives: each one stages its buffers, enqueues NCCL calls on the group's
// stream (mean and bitwise ops finish on the device, see mapping.hpp) and returns an event Work.
#include "real/nccl/backend.hpp"

#include "dist/errors.hpp"
#include "real/nccl/errors.hpp"

namespace dist::real {

using core::CallKind;

Staging NcclBackend::begin(CallKind kind) {
  Operation op = counter_.collective(std::string(core::to_string(kind)));
  comm_->activate(op);
  Staging s(comm_, std::move(op));
  return s;
}

Staging NcclBackend::begin_p2p(const char* kind, int peer) {
  Operation op =
      counter_.p2p(kind, peer, comm_->spec().global_ranks.at(static_cast<std::size_t>(peer)));
  comm_->activate(op);
  return Staging(comm_, std::move(op));
}

void NcclBackend::device_finish(Staging& s, DType dtype, void* out, const void* in,
                                std::size_t count, int slices, std::size_t stride,
                                kernels::Fold fold, long long divisor) {
  check_cuda(kernels::integer_finish(kernel_int_type(dtype), out, in, count, slices, stride, fold,
                                     divisor, comm_->stream()),
             [&] { return s.operation().name + ": the reduction on the device"; });
}

void NcclBackend::copy_on_device(Staging& s, void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0 || dst == src) return;
  check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, comm_->stream()),
             [&] { return s.operation().name + ": a copy on the device"; });
}

void NcclBackend::reduction(Staging& s, const void* in, void* out, std::size_t count, DType dtype,
                            ReduceOp op, int root) {
  const NcclReduction plan = nccl_reduction(op, dtype);
  const bool gets_result = root < 0 || root == rank();
  const ncclDataType_t type = nccl_dtype(dtype);
  if (plan.plan == NcclPlan::gather_then_fold) {
    void* all = s.scratch(count * static_cast<std::size_t>(size()) * dtype_size(dtype));
    comm_->run(s.operation(), [&](ncclComm_t c) {
      return ncclAllGather(in, all, count, type, c, comm_->stream());
    });
    if (gets_result) device_finish(s, dtype, out, all, count, size(), count, plan.fold, 1);
    return;
  }
  comm_->run(s.operation(), [&](ncclComm_t c) {
    return root < 0 ? ncclAllReduce(in, out, count, type, plan.op, c, comm_->stream())
                    : ncclReduce(in, out, count, type, plan.op, root, c, comm_->stream());
  });
  if (plan.plan == NcclPlan::sum_then_divide && gets_result)
    device_finish(s, dtype, out, out, count, 1, 0, kernels::Fold::none, size());
}

Work NcclBackend::all_reduce(core::Buf data, ReduceOp op) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(CallKind::all_reduce);
  if (data.count == 0) return core::completed_work();
  void* d = s.output(data, true);
  reduction(s, d, d, data.count, data.dtype, op, -1);
  return s.finish();
}

Work NcclBackend::reduce(core::Buf data, ReduceOp op, int root) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(CallKind::reduce);
  if (data.count == 0) return core::completed_work();
  if (size() == 1) root = 0;
  // Only the root's buffer changes: the others' are inputs (and stay as they were).
  void* d = rank() == root ? s.output(data, true) : s.input(data);
  reduction(s, d, d, data.count, data.dtype, op, root);
  return s.finish();
}

Work NcclBackend::reduce_scatter(core::Buf output, core::ConstBuf input, ReduceOp op) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(CallKind::reduce_scatter);
  if (output.count == 0) return core::completed_work();
  const void* in = s.input(input);
  void* out = s.output(output, false);
  const NcclReduction plan = nccl_reduction(op, input.dtype);
  if (plan.plan == NcclPlan::gather_then_fold) {
    void* all = s.scratch(input.bytes() * static_cast<std::size_t>(size()));
    comm_->run(s.operation(), [&](ncclComm_t c) {
      return ncclAllGather(in, all, input.count, nccl_dtype(input.dtype), c, comm_->stream());
    });
    const void* mine = element(all, output.count * static_cast<std::size_t>(rank()), input.dtype);
    device_finish(s, input.dtype, out, mine, output.count, size(), input.count, plan.fold, 1);
    return s.finish();
  }
  comm_->run(s.operation(), [&](ncclComm_t c) {
    return ncclReduceScatter(in, out, output.count, nccl_dtype(input.dtype), plan.op, c,
                             comm_->stream());
  });
  if (plan.plan == NcclPlan::sum_then_divide)
    device_finish(s, input.dtype, out, out, output.count, 1, 0, kernels::Fold::none, size());
  return s.finish();
}

Work NcclBackend::broadcast(core::Buf data, int root) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(CallKind::broadcast);
  if (data.count == 0) return core::completed_work();
  void* d = rank() == root ? s.input(data) : s.output(data, false);
  comm_->run(s.operation(), [&](ncclComm_t c) {
    return ncclBroadcast(d, d, data.count, nccl_dtype(data.dtype), root, c, comm_->stream());
  });
  return s.finish();
}

Work NcclBackend::all_gather(core::Buf output, core::ConstBuf input) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(CallKind::all_gather);
  if (input.count == 0) return core::completed_work();
  const void* in = s.input(input);
  void* out = s.output(output, false);
  comm_->run(s.operation(), [&](ncclComm_t c) {
    return ncclAllGather(in, out, input.count, nccl_dtype(input.dtype), c, comm_->stream());
  });
  return s.finish();
}

Work NcclBackend::barrier() {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(CallKind::barrier);
  void* token = s.scratch(sizeof(std::int32_t));
  comm_->run(s.operation(), [&](ncclComm_t c) {
    return ncclAllReduce(token, token, 1, ncclInt32, ncclSum, c, comm_->stream());
  });
  return s.finish();
}

void NcclBackend::abort(const std::exception_ptr& why) {
  comm_->abort(core::abort_text(why), true);
}

std::shared_ptr<core::BackendImpl> NcclBackend::shrink(
    const std::vector<int>& survivors, std::optional<std::chrono::milliseconds> timeout,
    bool abort_parent) {
  // An aborted communicator cannot shrink: the survivors connect anew (the front end's way).
  if (comm_->aborted()) return nullptr;
  // The survivors number it alike (the excluded ranks miss it): its roll call, the child's key.
  auto child = comm_->shrink(survivors, abort_parent, timeout.value_or(comm_->spec().timeout),
                             counter_.collective("shrink_group"));
  return std::make_shared<NcclBackend>(std::move(child));
}

std::shared_ptr<core::BackendImpl> NcclBackend::split(const std::vector<int>& ranks) {
  // A collective of the parent: every member numbers it alike (its roll call, the child's key).
  auto child = comm_->split(ranks, counter_.collective("new_group"));
  return child ? std::make_shared<NcclBackend>(std::move(child)) : nullptr;
}

}  // namespace dist::real
