// The erased collectives: validate (validate.hpp), take the one-rank shortcut of MMEngine, then
// call the group's backend. Every public collective template ends up here.
#include <cstring>
#include <vector>

#include "core/host_reduce.hpp"
#include "core/validate.hpp"
#include "dist/detail/erased.hpp"
#include "dist/errors.hpp"

namespace dist::detail {

namespace {
using core::check_buffer;
using core::check_count;
using core::resolve_group;

// The one-rank case of the gathering collectives: the output is the input.
Work copy_local(BufferRef output, ConstBufferRef input) {
  if (input.count > 0 && output.data != input.data)
    std::memmove(output.data, input.data, input.bytes());
  return {};
}
// Whether the one-rank shortcut may copy on the host: both buffers are host memory, or there is
// no backend to ask (a one-rank group of a device backend lets the backend copy on its device).
bool host_copy(const core::ResolvedGroup& t, ConstBufferRef a, ConstBufferRef b) {
  return !t.backend || (a.device.is_cpu() && b.device.is_cpu());
}
std::size_t times(int size, std::size_t count) { return static_cast<std::size_t>(size) * count; }

// Where the caller's slot of `per_rank` elements starts in a buffer of the group's slots: the
// in-place forms may pass exactly that slot (check_disjoint).
std::size_t slot(const core::ResolvedGroup& t, std::size_t per_rank) {
  return static_cast<std::size_t>(t.rank) * per_rank;
}

// premul_sum's input `data`, scaled into `into` (a host buffer of data's size, data itself for
// in place).
void premultiplied(ConstBufferRef data, const OpArg& op, const char* function, void* into) {
  core::check_op(op, data.dtype, function);
  if (data.count > 0 && !data.device.is_cpu())
    throw InvalidArgument(std::string(function) +
                          ": premul_sum needs host buffers, the data is on " +
                          to_string(data.device));
  check_buffer(data, nullptr, function, "data");
  core::premultiply(into, data.data, data.count, data.dtype, *op.premul_factor());
}

// A host copy of `data` scaled for premul_sum, and the buffer that views it.
struct Scaled {
  std::vector<std::byte> bytes;
  BufferRef buf;
  Scaled(ConstBufferRef data, const OpArg& op, const char* function)
      : bytes(data.count * dtype_size(data.dtype)),
        buf{bytes.data(), data.count, data.dtype, Device::cpu()} {
    premultiplied(data, op, function, bytes.data());
  }
};
}  // namespace

int group_size_checked(const Group& group, const char* function) {
  return resolve_group(group, function).size;
}

Work all_reduce(BufferRef data, const OpArg& op, const Group& group) {
  const auto t = resolve_group(group, "all_reduce");
  if (op.premul_factor())
    premultiplied(data, op, "all_reduce", data.data);  // the sum overwrites it
  if (t.size == 1) return {};
  const ReduceOp resolved = core::check_op(op, data.dtype, "all_reduce");
  check_buffer(data, t.backend, "all_reduce", "data");
  return t.backend->all_reduce(data, resolved);
}

Work broadcast(BufferRef data, int src, const Group& group) {
  const auto t = resolve_group(group, "broadcast");
  if (t.size == 1) return {};
  core::check_rank(src, t.size, "broadcast", "src");
  check_buffer(data, t.backend, "broadcast", "data");
  return t.backend->broadcast(data, src);
}

Work reduce(BufferRef data, int dst, const OpArg& op, const Group& group) {
  const auto t = resolve_group(group, "reduce");
  if (op.premul_factor()) {  // a non-root's data is its input: the sum runs on a scaled copy
    if (t.size > 1) core::check_rank(dst, t.size, "reduce", "dst");
    Scaled scaled(data, op, "reduce");
    if (t.size > 1) reduce(scaled.buf, dst, ReduceOp::sum, group).wait();
    if (t.rank == dst || t.size == 1) (void)copy_local(data, scaled.buf);  // a finished Work
    return {};
  }
  if (t.size == 1) return {};
  core::check_rank(dst, t.size, "reduce", "dst");
  const ReduceOp resolved = core::check_op(op, data.dtype, "reduce");
  check_buffer(data, t.backend, "reduce", "data");
  return t.backend->reduce(data, resolved, dst);
}

Work all_gather(BufferRef output, ConstBufferRef input, const Group& group) {
  const auto t = resolve_group(group, "all_gather");
  core::check_same_dtype(input, output, "all_gather");
  check_count(output.count, times(t.size, input.count), "all_gather", "output",
              "group size × input count");
  core::check_disjoint(input, output, slot(t, input.count), "all_gather", "input", "output");
  if (t.size == 1 && host_copy(t, output, input)) return copy_local(output, input);
  check_buffer(input, t.backend, "all_gather", "input");
  check_buffer(output, t.backend, "all_gather", "output");
  return t.backend->all_gather(output, input);
}

Work gather(BufferRef output, ConstBufferRef input, int dst, const Group& group) {
  const auto t = resolve_group(group, "gather");
  if (t.size > 1) core::check_rank(dst, t.size, "gather", "dst");
  const bool on_dst = t.rank == dst || t.size == 1;
  if (on_dst) {
    core::check_same_dtype(input, output, "gather");
    check_count(output.count, times(t.size, input.count), "gather", "output",
                "group size × input count");
    core::check_disjoint(input, output, slot(t, input.count), "gather", "input", "output");
  }
  if (t.size == 1 && host_copy(t, output, input)) return copy_local(output, input);
  check_buffer(input, t.backend, "gather", "input");
  if (on_dst) check_buffer(output, t.backend, "gather", "output");
  return t.backend->gather(on_dst ? output : BufferRef{nullptr, 0, input.dtype}, input, dst);
}

Work scatter(BufferRef output, ConstBufferRef input, int src, const Group& group) {
  const auto t = resolve_group(group, "scatter");
  if (t.size > 1) core::check_rank(src, t.size, "scatter", "src");
  const bool on_src = t.rank == src || t.size == 1;
  if (on_src) {
    core::check_same_dtype(input, output, "scatter");
    check_count(input.count, times(t.size, output.count), "scatter", "input",
                "group size × output count");
  }
  if (t.size == 1 && host_copy(t, output, input)) return copy_local(output, input);
  check_buffer(output, t.backend, "scatter", "output");
  if (on_src) check_buffer(input, t.backend, "scatter", "input");
  return t.backend->scatter(output, on_src ? input : ConstBufferRef{nullptr, 0, output.dtype}, src);
}

Work reduce_scatter(BufferRef output, ConstBufferRef input, const OpArg& op, const Group& group) {
  const auto t = resolve_group(group, "reduce_scatter");
  if (op.premul_factor()) {  // the input is const: the sum runs on a scaled copy
    Scaled scaled(input, op, "reduce_scatter");
    reduce_scatter(output, scaled.buf, ReduceOp::sum, group).wait();
    return {};
  }
  core::check_same_dtype(input, output, "reduce_scatter");
  core::check_divisible(input.count, t.size, "reduce_scatter", "input");
  check_count(output.count, input.count / static_cast<std::size_t>(t.size), "reduce_scatter",
              "output", "input count / group size");
  core::check_disjoint(output, input, slot(t, output.count), "reduce_scatter", "output", "input");
  if (t.size == 1 && host_copy(t, output, input)) return copy_local(output, input);
  const ReduceOp resolved = core::check_op(op, input.dtype, "reduce_scatter");
  check_buffer(input, t.backend, "reduce_scatter", "input");
  check_buffer(output, t.backend, "reduce_scatter", "output");
  return t.backend->reduce_scatter(output, input, resolved);
}

Work all_to_all(BufferRef output, ConstBufferRef input, const Group& group) {
  const auto t = resolve_group(group, "all_to_all");
  core::check_same_dtype(input, output, "all_to_all");
  core::check_divisible(input.count, t.size, "all_to_all", "input");
  check_count(output.count, input.count, "all_to_all", "output", "input count");
  core::check_disjoint(input, output, std::nullopt, "all_to_all", "input", "output");
  if (t.size == 1 && host_copy(t, output, input)) return copy_local(output, input);
  check_buffer(input, t.backend, "all_to_all", "input");
  check_buffer(output, t.backend, "all_to_all", "output");
  return t.backend->all_to_all(output, input);
}

Work all_to_all_v(BufferRef output, ConstBufferRef input,
                  std::span<const std::int64_t> output_splits,
                  std::span<const std::int64_t> input_splits, const Group& group) {
  constexpr const char* function = "all_to_all";
  const auto t = resolve_group(group, function);
  core::check_same_dtype(input, output, function);
  const auto in_counts =
      core::check_splits(input_splits, t.size, input.count, function, "input_splits", "input");
  const auto out_counts =
      core::check_splits(output_splits, t.size, output.count, function, "output_splits", "output");
  core::check_disjoint(input, output, std::nullopt, function, "input", "output");
  const auto me = static_cast<std::size_t>(t.rank);
  if (in_counts[me] != out_counts[me])  // the block a rank sends itself
    throw InvalidArgument("all_to_all: the caller (group rank " + std::to_string(me) +
                          ") sends itself input_splits[" + std::to_string(me) + "] = " +
                          std::to_string(in_counts[me]) + " elements but expects output_splits[" +
                          std::to_string(me) + "] = " + std::to_string(out_counts[me]));
  if (t.size == 1 && host_copy(t, output, input)) return copy_local(output, input);
  check_buffer(input, t.backend, function, "input");
  check_buffer(output, t.backend, function, "output");
  return t.backend->all_to_all_v(output, input, out_counts, in_counts);
}

Work all_gather_v(BufferRef output, ConstBufferRef input, std::span<const std::size_t> counts,
                  const Group& group) {
  const auto t = resolve_group(group, "all_gather_v");
  core::check_same_dtype(input, output, "all_gather_v");
  check_count(counts.size(), static_cast<std::size_t>(t.size), "all_gather_v", "counts",
              "one count per rank: the group size");
  check_count(input.count, counts[static_cast<std::size_t>(t.rank)], "all_gather_v", "input",
              "counts[own rank]");
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  check_count(output.count, total, "all_gather_v", "output", "the sum of counts");
  std::size_t before = 0;  // where this rank's slot of the output starts
  for (int r = 0; r < t.rank; ++r) before += counts[static_cast<std::size_t>(r)];
  core::check_disjoint(input, output, before, "all_gather_v", "input", "output");
  if (t.size == 1 && host_copy(t, output, input)) return copy_local(output, input);
  check_buffer(input, t.backend, "all_gather_v", "input");
  check_buffer(output, t.backend, "all_gather_v", "output");
  return t.backend->all_gather_v(output, input, counts);
}

Work send(ConstBufferRef data, int dst, int tag, const Group& group) {
  return core::check_p2p(data, dst, tag, group, "send", "dst").backend->send(data, dst, tag);
}

Work recv(BufferRef data, int src, int tag, const Group& group) {
  return core::post_recv(*core::check_p2p(data, src, tag, group, "recv", "src", true).backend, data,
                         src, tag);
}

}  // namespace dist::detail
