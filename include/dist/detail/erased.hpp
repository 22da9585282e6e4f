// The type-erased entry points the public collective templates forward to. Each validates its
// arguments (in core/validate.cpp), handles the one-rank case and calls the group's backend.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>

#include "dist/api.hpp"
#include "dist/export.hpp"
#include "dist/types.hpp"

namespace dist {
class Tensor;
}

namespace dist::detail {

// A contiguous buffer of `count` elements of `dtype` on `device` that a call only reads (an
// input, a send): const elements are welcome.
struct ConstBufferRef {
  const void* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::float32;
  Device device{};
  std::size_t bytes() const { return count * dtype_size(dtype); }
};

// A buffer a call writes (in place, an output, a receive). It reads as a ConstBufferRef where a
// call only reads; a ConstBufferRef never becomes one, so swapped arguments do not compile.
struct BufferRef {
  void* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::float32;
  Device device{};
  std::size_t bytes() const { return count * dtype_size(dtype); }
  operator ConstBufferRef() const { return {data, count, dtype, device}; }
};

template <Element T>
ConstBufferRef input_of(std::span<T> s) {
  return {s.data(), s.size(), dtype_v<std::remove_cv_t<T>>, Device::cpu()};
}

// A span of const elements does not compile here, with this message in the error.
template <Element T>
BufferRef buffer_of(std::span<T> s) {
  static_assert(!std::is_const_v<T>,
                "dist: this argument is written (in place, an output or a receive): pass a "
                "std::span<T> or std::vector<T>& of non-const elements, not std::span<const T>");
  if constexpr (std::is_const_v<T>) {
    return {};
  } else {
    return {s.data(), s.size(), dtype_v<T>, Device::cpu()};
  }
}

DIST_API BufferRef buffer_of(const Tensor& t);
inline ConstBufferRef input_of(const Tensor& t) { return buffer_of(t); }

// The number of ranks in `group` (1 when not distributed); validates that the caller is a member.
DIST_API int group_size_checked(const Group& group, const char* function);

// Every call takes what it writes first and what it only reads after, as the public calls do.
DIST_API Work all_reduce(BufferRef data, const OpArg& op, const Group& group);
DIST_API Work broadcast(BufferRef data, int src, const Group& group);
DIST_API Work reduce(BufferRef data, int dst, const OpArg& op, const Group& group);
// `output` holds group-size × input.count elements.
DIST_API Work all_gather(BufferRef output, ConstBufferRef input, const Group& group);
// `output` is used on dst only, where it holds group-size × input.count elements.
DIST_API Work gather(BufferRef output, ConstBufferRef input, int dst, const Group& group);
// `input` is used on src only, where it holds group-size × output.count elements.
DIST_API Work scatter(BufferRef output, ConstBufferRef input, int src, const Group& group);
// `input` holds group-size × output.count elements.
DIST_API Work reduce_scatter(BufferRef output, ConstBufferRef input, const OpArg& op,
                             const Group& group);
// `input` and `output` hold group-size × n elements each.
DIST_API Work all_to_all(BufferRef output, ConstBufferRef input, const Group& group);
// Uneven all_to_all: input_splits[j] elements (after the earlier blocks) go to group rank j, and
// output_splits[i] elements come from group rank i (checked: one split per rank, none negative,
// summing to the buffer's count).
DIST_API Work all_to_all_v(BufferRef output, ConstBufferRef input,
                           std::span<const std::int64_t> output_splits,
                           std::span<const std::int64_t> input_splits, const Group& group);
// Variable-size all_gather: rank r contributes counts[r] elements (every rank passes the same
// counts, and input.count == counts[own rank]); output holds their sum, in rank order.
DIST_API Work all_gather_v(BufferRef output, ConstBufferRef input,
                           std::span<const std::size_t> counts, const Group& group);
DIST_API Work send(ConstBufferRef data, int dst, int tag, const Group& group);
DIST_API Work recv(BufferRef data, int src, int tag, const Group& group);

// A Work as an *_async call, isend or irecv hands it to the user: entered in the rank's ledger of
// Works not yet waited, so returning (sim) or destroy_dist before its wait() raises an error
// naming the call. track_unwaited_send also takes the checksum of an isend's buffer, compared at
// wait() (sim by default; real backends under DIST_DEBUG=detail).
DIST_API Work track_unwaited(Work work);
DIST_API Work track_unwaited_send(Work work, ConstBufferRef data);

}  // namespace dist::detail
