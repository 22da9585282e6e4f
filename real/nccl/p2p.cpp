// NcclBackend's point-to-point calls and the operations built from grouped ncclSend/ncclRecv
// (gather, scatter, all_to_all) or grouped ncclBroadcast (the variable-size all_gather).
// NCCL has no tags: messages between two ranks match in issue order (as torch's NCCL backend).
#include "dist/errors.hpp"
#include "real/nccl/backend.hpp"
#include "real/nccl/errors.hpp"

namespace dist::real {

// The whole group runs under the communicator's lock (one run()); the first failing call's code
// wins, and ncclGroupEnd is always called once ncclGroupStart succeeded.
template <class F> void NcclBackend::grouped(Staging& s, F&& body) {
  comm_->run(s.operation(), [&](ncclComm_t c) {
    ncclResult_t first = ncclGroupStart();
    if (first != ncclSuccess) return first;
    const auto call = [&](ncclResult_t r) {
      if (first == ncclSuccess && r != ncclSuccess && r != ncclInProgress) first = r;
    };
    body(c, call);
    const ncclResult_t end = ncclGroupEnd();
    return first != ncclSuccess ? first : end;
  });
}

Work NcclBackend::send(core::ConstBuf data, int dst, int /*tag*/) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin_p2p("send", dst);
  if (data.count == 0) return core::completed_work();
  const void* in = s.input(data);
  comm_->run(s.operation(), [&](ncclComm_t c) {
    return ncclSend(in, data.count, nccl_dtype(data.dtype), dst, c, comm_->stream());
  });
  return s.finish();
}

Work NcclBackend::recv(core::Buf data, int src, int /*tag*/) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin_p2p("recv", src);
  if (data.count == 0) return core::completed_work();
  void* out = s.output(data, false);
  comm_->run(s.operation(), [&](ncclComm_t c) {
    return ncclRecv(out, data.count, nccl_dtype(data.dtype), src, c, comm_->stream());
  });
  return s.finish();
}

Work NcclBackend::gather(core::Buf output, core::ConstBuf input, int root) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(core::CallKind::gather);
  if (input.count == 0) return core::completed_work();
  if (size() == 1) root = 0;
  const void* in = s.input(input);
  const ncclDataType_t type = nccl_dtype(input.dtype);
  if (rank() != root) {
    grouped(s, [&](ncclComm_t c, auto call) {
      call(ncclSend(in, input.count, type, root, c, comm_->stream()));
    });
    return s.finish();
  }
  void* out = s.output(output, false);
  copy_on_device(s, element(out, input.count * static_cast<std::size_t>(root), input.dtype), in,
                 input.bytes());
  grouped(s, [&](ncclComm_t c, auto call) {
    for (int r = 0; r < size(); ++r)
      if (r != root)
        call(ncclRecv(element(out, input.count * static_cast<std::size_t>(r), input.dtype),
                      input.count, type, r, c, comm_->stream()));
  });
  return s.finish();
}

Work NcclBackend::scatter(core::Buf output, core::ConstBuf input, int root) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(core::CallKind::scatter);
  if (output.count == 0) return core::completed_work();
  if (size() == 1) root = 0;
  void* out = s.output(output, false);
  const ncclDataType_t type = nccl_dtype(output.dtype);
  if (rank() != root) {
    grouped(s, [&](ncclComm_t c, auto call) {
      call(ncclRecv(out, output.count, type, root, c, comm_->stream()));
    });
    return s.finish();
  }
  const void* in = s.input(input);
  copy_on_device(s, out, element(in, output.count * static_cast<std::size_t>(root), output.dtype),
                 output.bytes());
  grouped(s, [&](ncclComm_t c, auto call) {
    for (int r = 0; r < size(); ++r)
      if (r != root)
        call(ncclSend(element(in, output.count * static_cast<std::size_t>(r), output.dtype),
                      output.count, type, r, c, comm_->stream()));
  });
  return s.finish();
}

Work NcclBackend::all_to_all(core::Buf output, core::ConstBuf input) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(core::CallKind::all_to_all);
  if (input.count == 0) return core::completed_work();
  const std::size_t chunk = input.count / static_cast<std::size_t>(size());
  const void* in = s.input(input);
  void* out = s.output(output, false);
  // In place on the device (host data is staged into two fresh buffers): the grouped sends
  // would read chunks the receives overwrite, so the input is copied aside first, as mpi's
  // staging does.
  if (overlaps(in, out, input.bytes())) {
    void* aside = s.scratch(input.bytes());
    copy_on_device(s, aside, in, input.bytes());
    in = aside;
  }
  const ncclDataType_t type = nccl_dtype(input.dtype);
  const auto part = [&](auto* base, int r) {
    return element(base, chunk * static_cast<std::size_t>(r), input.dtype);
  };
  copy_on_device(s, part(out, rank()), part(in, rank()), chunk * dtype_size(input.dtype));
  grouped(s, [&](ncclComm_t c, auto call) {
    for (int r = 0; r < size(); ++r) {
      if (r == rank()) continue;
      call(ncclSend(part(in, r), chunk, type, r, c, comm_->stream()));
      call(ncclRecv(part(out, r), chunk, type, r, c, comm_->stream()));
    }
  });
  return s.finish();
}

Work NcclBackend::all_to_all_v(core::Buf output, core::ConstBuf input,
                               std::span<const std::size_t> output_counts,
                               std::span<const std::size_t> input_counts) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(core::CallKind::all_to_all_v);
  if (input.count == 0 && output.count == 0) return core::completed_work();
  const void* in = s.input(input);
  void* out = s.output(output, false);  // never overlapping: the front end refuses it
  const ncclDataType_t type = nccl_dtype(input.dtype);
  std::vector<std::size_t> in_at(input_counts.size()), out_at(output_counts.size());
  for (std::size_t r = 1; r < in_at.size(); ++r) {
    in_at[r] = in_at[r - 1] + input_counts[r - 1];
    out_at[r] = out_at[r - 1] + output_counts[r - 1];
  }
  const auto me = static_cast<std::size_t>(rank());
  copy_on_device(s, element(out, out_at[me], input.dtype), element(in, in_at[me], input.dtype),
                 input_counts[me] * dtype_size(input.dtype));
  grouped(s, [&](ncclComm_t c, auto call) {
    for (std::size_t r = 0; r < in_at.size(); ++r) {
      if (r == me) continue;
      const int peer = static_cast<int>(r);
      if (input_counts[r] > 0)
        call(ncclSend(element(in, in_at[r], input.dtype), input_counts[r], type, peer, c,
                      comm_->stream()));
      if (output_counts[r] > 0)
        call(ncclRecv(element(out, out_at[r], output.dtype), output_counts[r], type, peer, c,
                      comm_->stream()));
    }
  });
  return s.finish();
}

Work NcclBackend::all_gather_v(core::Buf output, core::ConstBuf input,
                               std::span<const std::size_t> counts) {
  DeviceGuard guard(comm_->spec().device);
  Staging s = begin(core::CallKind::all_gather_v);
  if (output.count == 0) return core::completed_work();
  const void* in = s.input(input);
  void* out = s.output(output, false);
  const ncclDataType_t type = nccl_dtype(input.dtype);
  grouped(s, [&](ncclComm_t c, auto call) {
    std::size_t offset = 0;
    for (int r = 0; r < size(); ++r) {
      const std::size_t n = counts[static_cast<std::size_t>(r)];
      if (n > 0)  // every rank skips the same empty contributions
        call(ncclBroadcast(in, element(out, offset, input.dtype), n, type, r, c, comm_->stream()));
      offset += n;
    }
  });
  return s.finish();
}

}  // namespace dist::real
