// Each BackendImpl operation's CallDesc, from its arguments: what the call layer records and
// what a backend that agrees on calls itself (mpi, real/mpi/agreement.hpp) compares, written once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/backend_impl.hpp"
#include "core/calls/call.hpp"

namespace dist::core::call_of {

inline CallDesc all_reduce(const ConstBuf& data, ReduceOp op) {
  return make_call(CallKind::all_reduce, data.dtype, data.count, -1, op);
}
inline CallDesc broadcast(const ConstBuf& data, int root) {
  return make_call(CallKind::broadcast, data.dtype, data.count, root);
}
inline CallDesc reduce(const ConstBuf& data, ReduceOp op, int root) {
  return make_call(CallKind::reduce, data.dtype, data.count, root, op);
}
inline CallDesc all_gather(const ConstBuf& input) {
  return make_call(CallKind::all_gather, input.dtype, input.count);
}
inline CallDesc gather(const ConstBuf& input, int root) {
  return make_call(CallKind::gather, input.dtype, input.count, root);
}
inline CallDesc scatter(const ConstBuf& output, int root) {
  return make_call(CallKind::scatter, output.dtype, output.count, root);
}
inline CallDesc reduce_scatter(const ConstBuf& output, ReduceOp op) {
  return make_call(CallKind::reduce_scatter, output.dtype, output.count, -1, op);
}
inline CallDesc all_to_all(const ConstBuf& input) {
  return make_call(CallKind::all_to_all, input.dtype, input.count);
}
// The counts every rank must give alike are hashed into `lists_hash`.
inline CallDesc all_gather_v(const ConstBuf& output, const ConstBuf& input,
                             std::span<const std::size_t> counts) {
  CallDesc d = make_call(CallKind::all_gather_v, input.dtype, output.count);
  const std::vector<std::uint64_t> values(counts.begin(), counts.end());
  d.lists_hash = hash_list(values);
  return d;
}
// The splits differ between ranks: only the kind and dtype must agree.
inline CallDesc all_to_all_v(const ConstBuf& input) {
  return make_call(CallKind::all_to_all_v, input.dtype);
}
inline CallDesc barrier() { return make_call(CallKind::barrier); }
// new_group's list, hashed into `lists_hash`.
inline CallDesc split(const std::vector<int>& ranks) {
  CallDesc d = make_call(CallKind::split);
  const std::vector<std::uint64_t> values(ranks.begin(), ranks.end());
  d.lists_hash = hash_list(values);
  return d;
}
inline CallDesc send(const ConstBuf& data, int dst, int tag) {
  return make_call(CallKind::send, data.dtype, data.count, dst, ReduceOp::sum, tag);
}
inline CallDesc recv(const ConstBuf& data, int src, int tag) {
  return make_call(CallKind::recv, data.dtype, data.count, src, ReduceOp::sum, tag);
}

}  // namespace dist::core::call_of
