// Default implementations of the composed Backend operations, written only against the
// primitives (all_reduce, broadcast, all_gather, send, recv). They block until done and operate on
// host memory; a backend whose engine has the operation natively overrides it.
#include "core/backend_impl.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/calls/call.hpp"
#include "core/group_text.hpp"
#include "core/work_state.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {
// A host scratch buffer of `count` elements of `dtype`.
struct Scratch {
  std::vector<std::byte> bytes;
  Buf buf;
  Scratch(std::size_t count, DType dtype)
      : bytes(count * dtype_size(dtype)), buf{bytes.data(), count, dtype, Device::cpu()} {}
};

std::byte* at(const Buf& b, std::size_t element) {
  return static_cast<std::byte*>(b.data) + element * dtype_size(b.dtype);
}
const std::byte* at(const ConstBuf& b, std::size_t element) {
  return static_cast<const std::byte*>(b.data) + element * dtype_size(b.dtype);
}

void copy_elements(void* dst, const void* src, std::size_t count, DType dtype) {
  if (count > 0) std::memcpy(dst, src, count * dtype_size(dtype));
}

}  // namespace

Work BackendImpl::reduce(Buf data, ReduceOp op, int root) {
  Scratch tmp(data.count, data.dtype);
  copy_elements(tmp.buf.data, data.data, data.count, data.dtype);
  all_reduce(tmp.buf, op).wait();
  if (rank() == root) copy_elements(data.data, tmp.buf.data, data.count, data.dtype);
  return completed_work();
}

Work BackendImpl::gather(Buf output, ConstBuf input, int root) {
  Scratch tmp(input.count * static_cast<std::size_t>(size()), input.dtype);
  all_gather(tmp.buf, input).wait();
  if (rank() == root) copy_elements(output.data, tmp.buf.data, tmp.buf.count, input.dtype);
  return completed_work();
}

Work BackendImpl::scatter(Buf output, ConstBuf input, int root) {
  Scratch tmp(output.count * static_cast<std::size_t>(size()), output.dtype);
  if (rank() == root) copy_elements(tmp.buf.data, input.data, tmp.buf.count, output.dtype);
  broadcast(tmp.buf, root).wait();
  copy_elements(output.data, at(tmp.buf, output.count * static_cast<std::size_t>(rank())),
                output.count, output.dtype);
  return completed_work();
}

Work BackendImpl::reduce_scatter(Buf output, ConstBuf input, ReduceOp op) {
  Scratch tmp(input.count, input.dtype);
  copy_elements(tmp.buf.data, input.data, input.count, input.dtype);
  all_reduce(tmp.buf, op).wait();
  copy_elements(output.data, at(tmp.buf, output.count * static_cast<std::size_t>(rank())),
                output.count, output.dtype);
  return completed_work();
}

Work BackendImpl::all_to_all(Buf output, ConstBuf input) {
  const std::size_t chunk = input.count / static_cast<std::size_t>(size());
  std::vector<Work> pending;
  for (int peer = 0; peer < size(); ++peer) {
    const std::size_t offset = chunk * static_cast<std::size_t>(peer);
    if (peer == rank()) {
      copy_elements(at(output, offset), at(input, offset), chunk, input.dtype);
      continue;
    }
    pending.push_back(
        send({at(input, offset), chunk, input.dtype, input.device}, peer, all_to_all_tag));
    pending.push_back(
        recv({at(output, offset), chunk, output.dtype, output.device}, peer, all_to_all_tag));
  }
  for (auto& w : pending) w.wait();
  return completed_work();
}

Work BackendImpl::all_to_all_v(Buf output, ConstBuf input,
                               std::span<const std::size_t> output_counts,
                               std::span<const std::size_t> input_counts) {
  const auto me = static_cast<std::size_t>(rank());  // its own block's sizes agree (validated)
  std::vector<Work> pending;
  std::vector<int> peers;  // the peer of each pending Work
  std::size_t in_offset = 0, out_offset = 0;
  for (std::size_t peer = 0; peer < input_counts.size(); ++peer) {
    const ConstBuf in{at(input, in_offset), input_counts[peer], input.dtype, input.device};
    const Buf out{at(output, out_offset), output_counts[peer], output.dtype, output.device};
    in_offset += input_counts[peer];
    out_offset += output_counts[peer];
    if (peer == me) {
      copy_elements(out.data, in.data, in.count, input.dtype);
      continue;
    }
    pending.push_back(send(in, static_cast<int>(peer), all_to_all_v_tag));
    pending.push_back(recv(out, static_cast<int>(peer), all_to_all_v_tag));
    peers.push_back(static_cast<int>(peer));
    peers.push_back(static_cast<int>(peer));
  }
  // A size mismatch (the p2p layer's InvalidArgument, sim's DesyncError) waits for the other
  // messages, so none outlives the call, then is raised as the all_to_all's; other errors at once.
  std::string mismatch;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    try {
      pending[i].wait();
    } catch (const Error& e) {
      if (e.code() != ErrorCode::invalid_argument && e.code() != ErrorCode::desync) throw;
      if (mismatch.empty())
        mismatch = "all_to_all with splits: ranks " + std::to_string(rank()) + " and " +
                   std::to_string(peers[i]) + " disagree on the size of a block: " + e.what();
    }
  }
  if (!mismatch.empty()) throw DesyncError(mismatch);
  return completed_work();
}

Work BackendImpl::all_gather_v(Buf output, ConstBuf input, std::span<const std::size_t> counts) {
  const std::size_t max_count =
      counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  Scratch padded(max_count, input.dtype);
  copy_elements(padded.buf.data, input.data, input.count, input.dtype);
  Scratch all(max_count * counts.size(), input.dtype);
  all_gather(all.buf, padded.buf).wait();
  std::size_t offset = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    copy_elements(at(output, offset), at(all.buf, r * max_count), counts[r], input.dtype);
    offset += counts[r];
  }
  return completed_work();
}

void BackendImpl::monitored_barrier(std::chrono::milliseconds timeout, bool wait_all_ranks) {
  try {
    barrier().wait(timeout);
  } catch (const TimeoutError& e) {
    if (e.missing_ranks().empty()) throw;
    throw monitored_barrier_timeout(e.missing_ranks(), wait_all_ranks, timeout);
  }
}

TimeoutError monitored_barrier_timeout(const std::vector<int>& missing, bool wait_all_ranks,
                                       std::chrono::milliseconds timeout) {
  const std::vector<int> named =
      wait_all_ranks ? missing : std::vector<int>(missing.begin(), missing.begin() + 1);
  return TimeoutError("monitored_barrier (timeout " + std::to_string(timeout.count()) +
                          " ms): " + ranks_phrase(named) + (named.size() == 1 ? " has" : " have") +
                          " not arrived",
                      named);
}

std::shared_ptr<BackendImpl> BackendImpl::split_local(const std::vector<int>&) {
  throw InvalidArgument("new_group: the " + std::string(to_string(kind())) +
                        " backend cannot make a group with use_local_synchronization (only the "
                        "members calling); call new_group on every rank instead");
}

std::string BackendImpl::recovery_refusal() const {
  return "the " + std::string(to_string(kind())) +
         " backend cannot abort, shrink or reconfigure a group yet (sim can: run the recovery path "
         "there)";
}

void BackendImpl::abort(const std::exception_ptr&) {}

std::shared_ptr<BackendImpl> BackendImpl::shrink(const std::vector<int>&,
                                                 std::optional<std::chrono::milliseconds>, bool) {
  return nullptr;
}

std::string local_group_key(const std::vector<int>& ranks, int k) {
  std::vector<std::uint64_t> values(ranks.begin(), ranks.end());
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08x", hash_list(values));
  return "l" + std::string(hex) + "." + std::to_string(k);
}

std::shared_ptr<BackendImpl> BackendImpl::split_groups(const Layout& layout) {
  std::shared_ptr<BackendImpl> mine;
  for (std::size_t i = 0; i < layout.count; ++i) {
    const bool own = static_cast<int>(i) == layout.color;
    if (auto child = split(own ? layout.own() : layout.list(i))) mine = std::move(child);
  }
  return mine;
}

std::string abort_text(const std::exception_ptr& why) {
  try {
    if (why) std::rethrow_exception(why);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  return "dist::abort";
}

Work post_recv(BackendImpl& backend, Buf data, int src, int tag) {
  Work work = backend.recv(data, src, tag);
  if (src != any_source && work.state()) work.state()->received_from = src;
  return work;
}

}  // namespace dist::core
