// Chunked execution plans of the reductions (all_reduce, reduce, reduce_scatter): blocks of
// reduce_block bytes folded in rank order in a per-thread scratch buffer, so that an in-place
// buffer is never written before every rank's block has been read. Copies are in copy_plan.cpp.
#include "sim/plan.hpp"

#include <cstring>
#include <memory>
#include <vector>

#include "sim/reduce_kernels.hpp"

namespace dist::sim {

namespace {
constexpr std::size_t reduce_block = 32 * 1024;


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
    case OpKind::barrier:
    case OpKind::split:
      return {};
    default:
      return copy_plan(op);
  }
}

}  // namespace dist::sim
