// Chunked execution plans of the reductions (all_reduce, reduce, reduce_scatter): blocks of
// reduce_block bytes folded in rank order (core/host_reduce's kernels) in a per-thread scratch
// buffer, so that an in-place buffer is never written before every rank's block has been read.
// Copies are in copy_plan.cpp.
#include "sim/plan.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/host_reduce.hpp"

namespace dist::sim {

namespace {
constexpr std::size_t reduce_block = 32 * 1024;


std::byte* scratch(std::size_t bytes) {
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

// Where a reduction's results go: every participant's output (all_reduce), only the root's
// (reduce), or segment s of the inputs into participant s's output (reduce_scatter).
enum class Target : std::uint8_t { all, root, scatter };

Target target_of(OpKind kind) {
  if (kind == OpKind::reduce) return Target::root;
  if (kind == OpKind::reduce_scatter) return Target::scatter;
  return Target::all;
}

// Folds elements [begin, begin + n) of segment `seg` of every participant's input, in rank order.
template <class T> void run_reduce_block(const std::vector<Call>& calls, std::size_t seg,
                                         std::size_t begin, std::size_t n) {
  const Call& first = calls.front();
  const ReduceOp op = first.op;
  const Target target = target_of(first.kind);
  const int world = static_cast<int>(calls.size());
  const std::size_t in_base = target == Target::scatter ? seg * first.count : 0;
  T* acc = reinterpret_cast<T*>(scratch(n * sizeof(T)));
  const auto in = [&](std::size_t r) {
    return reinterpret_cast<const T*>(in_at(calls[r], in_base + begin));
  };
  // The first step reads ranks 0 and 1 straight from their buffers (one pass less than copying
  // rank 0's block first); the rest fold into the scratch block, in rank order.
  const core::ReduceStep fold = core::reduce_step(first.dtype, op);
  if (calls.size() == 1) std::memcpy(acc, in(0), n * sizeof(T));
  else fold(acc, in(0), in(1), n);
  for (std::size_t r = 2; r < calls.size(); ++r) fold(acc, acc, in(r), n);
  if (op == ReduceOp::mean) core::finish_mean(acc, n, first.dtype, world);
  switch (target) {
    case Target::scatter: std::memcpy(out_at(calls[seg], begin), acc, n * sizeof(T)); break;
    case Target::all:
      for (const Call& c : calls) std::memcpy(out_at(c, begin), acc, n * sizeof(T));
      break;
    case Target::root:
      std::memcpy(out_at(calls[static_cast<std::size_t>(first.root_or_peer)], begin), acc,
                  n * sizeof(T));
      break;
  }
}

template <class T> constexpr std::size_t per_block = std::max<std::size_t>(1, reduce_block / sizeof(T));

template <class T> std::size_t blocks_of(const Call& first) {
  return (first.count + per_block<T> - 1) / per_block<T>;
}

template <class T> Plan typed_reduce_plan(const Op& op) {
  const Call& first = op.calls.front();
  const std::size_t segments = target_of(first.kind) == Target::scatter ? op.calls.size() : 1;
  Plan plan;
  plan.chunks = blocks_of<T>(first) * segments;
  plan.run = [](const Op& o, std::size_t c) {
    const Call& f = o.calls.front();
    const std::size_t blocks = blocks_of<T>(f);
    const std::size_t begin = (c % blocks) * per_block<T>;
    run_reduce_block<T>(o.calls, c / blocks, begin, std::min(per_block<T>, f.count - begin));
  };
  return plan;
}

Plan reduce_plan(const Op& op) {
  switch (op.calls.front().dtype) {
    case DType::int8: return typed_reduce_plan<std::int8_t>(op);
    case DType::uint8: return typed_reduce_plan<std::uint8_t>(op);
    case DType::int32: return typed_reduce_plan<std::int32_t>(op);
    case DType::uint32: return typed_reduce_plan<std::uint32_t>(op);
    case DType::int64: return typed_reduce_plan<std::int64_t>(op);
    case DType::uint64: return typed_reduce_plan<std::uint64_t>(op);
    case DType::float16: return typed_reduce_plan<float16>(op);
    case DType::bfloat16: return typed_reduce_plan<bfloat16>(op);
    case DType::float32: return typed_reduce_plan<float>(op);
    case DType::float64: return typed_reduce_plan<double>(op);
  }
  return {};
}

}  // namespace

Plan make_plan(const Op& op) {
  switch (op.calls.front().kind) {
    case OpKind::all_reduce:
    case OpKind::reduce:
    case OpKind::reduce_scatter:
      return reduce_plan(op);
    case OpKind::barrier:
    case OpKind::split:
    case OpKind::split_groups: return {};
    default:
      return copy_plan(op);
  }
}

}  // namespace dist::sim
