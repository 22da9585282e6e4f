// Chunked execution plans for every kind of op. Copies are split into blocks of copy_block
// bytes; reductions into blocks of reduce_block bytes folded in a per-thread scratch buffer, so
// that an in-place buffer is never written before every rank's block has been read.
#include "sim/plan.hpp"

#include <cstring>
#include <memory>
#include <vector>

#include "sim/reduce_kernels.hpp"

namespace dist::sim {

namespace {
constexpr std::size_t copy_block = 256 * 1024;
constexpr std::size_t reduce_block = 32 * 1024;

struct CopyTask {
  void* dst;
  const void* src;
  std::size_t bytes;
};

// Cuts copy tasks into blocks; chunk c is one block of one task.
Plan copy_plan(std::vector<CopyTask> tasks) {
  auto blocks = std::make_shared<std::vector<CopyTask>>();
  for (const auto& t : tasks)
    for (std::size_t off = 0; off < t.bytes; off += copy_block)
      blocks->push_back({static_cast<std::byte*>(t.dst) + off,
                         static_cast<const std::byte*>(t.src) + off,
                         std::min(copy_block, t.bytes - off)});
  Plan plan;
  plan.chunks = blocks->size();
  plan.run = [blocks](std::size_t c) {
    const auto& b = (*blocks)[c];
    if (b.dst != b.src) std::memcpy(b.dst, b.src, b.bytes);
  };
  return plan;
}

const std::byte* in_at(const Call& c, std::size_t element) {
  return static_cast<const std::byte*>(c.in) + element * dtype_size(c.dtype);
}
std::byte* out_at(const Call& c, std::size_t element) {
  return static_cast<std::byte*>(c.out) + element * dtype_size(c.dtype);
}

std::byte* scratch(std::size_t bytes) {
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

// A reduction of `segments` segments of `count` elements: segment s reads every participant's
// input at in_offset(s) and writes the result to the outputs that targets(s) names.
struct ReduceSpec {
  std::vector<Call> calls;
  std::size_t count = 0;
  std::size_t segments = 1;
  bool to_all = true;  // write every participant's output (else only `target`'s)
  int target = 0;      // the single output (reduce: root) when !to_all; reduce_scatter: segment
  bool scatter = false;  // reduce_scatter: segment s reduces input chunk s into rank s's output
};

template <class T> void run_reduce_block(const ReduceSpec& s, std::size_t seg, std::size_t begin,
                                         std::size_t n) {
  const Call& first = s.calls.front();
  const ReduceOp op = first.op;
  const int world = static_cast<int>(s.calls.size());
  const std::size_t in_base = s.scatter ? seg * s.count : 0;
  T* acc = reinterpret_cast<T*>(scratch(n * sizeof(T)));
  std::memcpy(acc, in_at(first, in_base + begin), n * sizeof(T));
  for (std::size_t r = 1; r < s.calls.size(); ++r)
    kernels::fold(op, acc, reinterpret_cast<const T*>(in_at(s.calls[r], in_base + begin)), n);
  if (op == ReduceOp::mean) kernels::finish_mean(acc, n, world);
  if (s.scatter) {
    std::memcpy(out_at(s.calls[seg], begin), acc, n * sizeof(T));
  } else if (s.to_all) {
    for (const Call& c : s.calls) std::memcpy(out_at(c, begin), acc, n * sizeof(T));
  } else {
    std::memcpy(out_at(s.calls[static_cast<std::size_t>(s.target)], begin), acc, n * sizeof(T));
  }
}

template <class T> Plan typed_reduce_plan(std::shared_ptr<const ReduceSpec> spec) {
  const std::size_t per_block = std::max<std::size_t>(1, reduce_block / sizeof(T));
  const std::size_t blocks = (spec->count + per_block - 1) / per_block;
  Plan plan;
  plan.chunks = blocks * spec->segments;
  plan.run = [spec, per_block, blocks](std::size_t c) {
    const std::size_t seg = c / blocks;
    const std::size_t begin = (c % blocks) * per_block;
    run_reduce_block<T>(*spec, seg, begin, std::min(per_block, spec->count - begin));
  };
  return plan;
}

Plan reduce_plan(ReduceSpec spec) {
  auto s = std::make_shared<const ReduceSpec>(std::move(spec));
  switch (s->calls.front().dtype) {
    case DType::int8: return typed_reduce_plan<std::int8_t>(s);
    case DType::uint8: return typed_reduce_plan<std::uint8_t>(s);
    case DType::int32: return typed_reduce_plan<std::int32_t>(s);
    case DType::uint32: return typed_reduce_plan<std::uint32_t>(s);
    case DType::int64: return typed_reduce_plan<std::int64_t>(s);
    case DType::uint64: return typed_reduce_plan<std::uint64_t>(s);
    case DType::float16: return typed_reduce_plan<float16>(s);
    case DType::bfloat16: return typed_reduce_plan<bfloat16>(s);
    case DType::float32: return typed_reduce_plan<float>(s);
    case DType::float64: return typed_reduce_plan<double>(s);
  }
  return {};
}

Plan gathering_plan(const Op& op) {
  const auto& calls = op.calls;
  const Call& first = calls.front();
  const std::size_t n = first.count;
  const std::size_t bytes = n * dtype_size(first.dtype);
  const std::size_t world = calls.size();
  const auto root = static_cast<std::size_t>(first.root);
  std::vector<std::size_t> offsets(first.counts.size(), 0);  // all_gather_v's output offsets
  for (std::size_t i = 1; i < offsets.size(); ++i) offsets[i] = offsets[i - 1] + first.counts[i - 1];
  std::vector<CopyTask> tasks;
  for (std::size_t dst = 0; dst < world; ++dst) {
    for (std::size_t src = 0; src < world; ++src) {
      switch (first.kind) {
        case OpKind::broadcast:
          if (src == root && dst != root) tasks.push_back({calls[dst].out, calls[src].in, bytes});
          break;
        case OpKind::all_gather:
          tasks.push_back({out_at(calls[dst], src * n), calls[src].in, bytes});
          break;
        case OpKind::gather:
          if (dst == root) tasks.push_back({out_at(calls[dst], src * n), calls[src].in, bytes});
          break;
        case OpKind::scatter:
          if (src == root) tasks.push_back({calls[dst].out, in_at(calls[src], dst * n), bytes});
          break;
        case OpKind::all_gather_v:
          tasks.push_back({out_at(calls[dst], offsets[src]), calls[src].in,
                           first.counts[src] * dtype_size(first.dtype)});
          break;
        case OpKind::all_to_all:
          tasks.push_back({out_at(calls[dst], src * n), in_at(calls[src], dst * n), bytes});
          break;
        default: break;
      }
    }
  }
  return copy_plan(std::move(tasks));
}
}  // namespace

Plan make_plan(const Op& op) {
  const Call& first = op.calls.front();
  switch (first.kind) {
    case OpKind::all_reduce:
      return reduce_plan({.calls = op.calls, .count = first.count});
    case OpKind::reduce:
      return reduce_plan(
          {.calls = op.calls, .count = first.count, .to_all = false, .target = first.root});
    case OpKind::reduce_scatter:
      return reduce_plan({.calls = op.calls,
                          .count = first.count,
                          .segments = op.calls.size(),
                          .scatter = true});
    case OpKind::send:
    case OpKind::recv:
      return copy_plan({{op.calls[1].out, op.calls[0].in,
                         first.count * dtype_size(first.dtype)}});
    case OpKind::barrier:
    case OpKind::split:
      return {};
    default:
      return gathering_plan(op);
  }
}

}  // namespace dist::sim
