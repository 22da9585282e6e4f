// The tensor collectives, for std::vector<T>, std::span<T> and dist::Tensor data.
//
// Common rules (checked in one place, core/validate.cpp):
// - `src`/`dst` are ranks within `group`; out of range raises InvalidArgument naming the argument.
// - Counts that must agree across ranks and do not raise DesyncError on every rank (sim always;
//   real backends with DIST_DEBUG=detail).
// - Bitwise ops need an integer dtype; an unknown op name raises InvalidArgument, but only when
//   the group has more than one rank (a one-rank group returns at once, as MMEngine does).
// - A group of one rank (or no distributed context) is the identity: data is left as it is and
//   gathers return the caller's own data.
// - The *_async forms return a Work; the buffers must outlive its wait().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dist/api.hpp"
#include "dist/detail/erased.hpp"
#include "dist/errors.hpp"
#include "dist/export.hpp"
#include "dist/tensor.hpp"
#include "dist/types.hpp"

namespace dist {

namespace detail {
// Splits a flat buffer of n × chunk elements into n vectors.
template <class T> std::vector<std::vector<T>> split_chunks(const std::vector<T>& flat, int n) {
  std::vector<std::vector<T>> out(static_cast<std::size_t>(n));
  const std::size_t chunk = n > 0 ? flat.size() / static_cast<std::size_t>(n) : 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i].assign(flat.begin() + static_cast<std::ptrdiff_t>(i * chunk),
                  flat.begin() + static_cast<std::ptrdiff_t>((i + 1) * chunk));
  return out;
}
DIST_API std::vector<Tensor> split_tensor(const Tensor& flat, int n,
                                          const std::vector<std::int64_t>& shape);
}  // namespace detail

// all_reduce: every rank's data becomes the reduction of all ranks' data (in place).
template <Element T>
void all_reduce(std::span<T> data, OpArg op = ReduceOp::sum, const Group& group = {}) {
  detail::all_reduce(detail::buffer_of(data), op, group).wait();
}
template <Element T>
void all_reduce(std::vector<T>& data, OpArg op = ReduceOp::sum, const Group& group = {}) {
  all_reduce(std::span<T>(data), op, group);
}
DIST_API void all_reduce(Tensor& data, OpArg op = ReduceOp::sum, const Group& group = {});
template <Element T>
Work all_reduce_async(std::span<T> data, OpArg op = ReduceOp::sum, const Group& group = {}) {
  return detail::track_unwaited(detail::all_reduce(detail::buffer_of(data), op, group));
}
DIST_API Work all_reduce_async(Tensor& data, OpArg op = ReduceOp::sum, const Group& group = {});

// broadcast: every rank's data becomes src's data (in place; every rank passes the same count).
template <Element T> void broadcast(std::span<T> data, int src = 0, const Group& group = {}) {
  detail::broadcast(detail::buffer_of(data), src, group).wait();
}
template <Element T> void broadcast(std::vector<T>& data, int src = 0, const Group& group = {}) {
  broadcast(std::span<T>(data), src, group);
}
DIST_API void broadcast(Tensor& data, int src = 0, const Group& group = {});
template <Element T>
Work broadcast_async(std::span<T> data, int src = 0, const Group& group = {}) {
  return detail::track_unwaited(detail::broadcast(detail::buffer_of(data), src, group));
}
DIST_API Work broadcast_async(Tensor& data, int src = 0, const Group& group = {});

// reduce: dst's data becomes the reduction of all ranks' data; other ranks' data is unchanged.
template <Element T>
void reduce(std::span<T> data, int dst = 0, OpArg op = ReduceOp::sum, const Group& group = {}) {
  detail::reduce(detail::buffer_of(data), dst, op, group).wait();
}
template <Element T>
void reduce(std::vector<T>& data, int dst = 0, OpArg op = ReduceOp::sum,
            const Group& group = {}) {
  reduce(std::span<T>(data), dst, op, group);
}
DIST_API void reduce(Tensor& data, int dst = 0, OpArg op = ReduceOp::sum, const Group& group = {});
template <Element T>
Work reduce_async(std::span<T> data, int dst = 0, OpArg op = ReduceOp::sum,
                  const Group& group = {}) {
  return detail::track_unwaited(detail::reduce(detail::buffer_of(data), dst, op, group));
}

// all_gather: every rank gets every rank's data, in group-rank order (same count on all ranks).
template <Element T>
std::vector<std::vector<std::remove_cv_t<T>>> all_gather(std::span<T> data,
                                                         const Group& group = {}) {
  using U = std::remove_cv_t<T>;
  const int n = detail::group_size_checked(group, "all_gather");
  std::vector<U> flat(data.size() * static_cast<std::size_t>(n));
  detail::all_gather(detail::buffer_of(std::span<U>(flat)), detail::input_of(data), group).wait();
  return detail::split_chunks(flat, n);
}
template <Element T>
std::vector<std::vector<T>> all_gather(const std::vector<T>& data, const Group& group = {}) {
  return all_gather(std::span<const T>(data), group);
}
DIST_API std::vector<Tensor> all_gather(const Tensor& data, const Group& group = {});
// Into `output` of group-size × input.size() elements.
template <Element T, Element U>
Work all_gather_async(std::span<U> output, std::span<T> input, const Group& group = {}) {
  return detail::track_unwaited(
      detail::all_gather(detail::buffer_of(output), detail::input_of(input), group));
}

// gather: dst gets every rank's data in group-rank order; the other ranks get an empty list.
template <Element T>
std::vector<std::vector<std::remove_cv_t<T>>> gather(std::span<T> data, int dst = 0,
                                                     const Group& group = {}) {
  using U = std::remove_cv_t<T>;
  const int n = detail::group_size_checked(group, "gather");
  const bool on_dst = get_rank(group) == dst;
  std::vector<U> flat(on_dst ? data.size() * static_cast<std::size_t>(n) : 0);
  detail::gather(detail::buffer_of(std::span<U>(flat)), detail::input_of(data), dst, group).wait();
  if (!on_dst) return {};
  return detail::split_chunks(flat, n);
}
template <Element T>
std::vector<std::vector<T>> gather(const std::vector<T>& data, int dst = 0,
                                   const Group& group = {}) {
  return gather(std::span<const T>(data), dst, group);
}
DIST_API std::vector<Tensor> gather(const Tensor& data, int dst = 0, const Group& group = {});
// On dst, `output` holds group-size × input.size() elements; elsewhere it is ignored.
template <Element T, Element U>
Work gather_async(std::span<U> output, std::span<T> input, int dst = 0, const Group& group = {}) {
  return detail::track_unwaited(
      detail::gather(detail::buffer_of(output), detail::input_of(input), dst, group));
}

// scatter: rank r's output becomes chunk r of src's input (group-size × output.size() elements
// on src; ignored elsewhere).
template <Element T, Element U>
void scatter(std::span<T> output, std::span<U> input, int src = 0, const Group& group = {}) {
  detail::scatter(detail::buffer_of(output), detail::input_of(input), src, group).wait();
}
// The list form of torch.distributed.scatter: `chunks` (used on src only) holds one vector per
// rank, each of output.size() elements.
template <Element T>
void scatter(std::vector<T>& output, const std::vector<std::vector<T>>& chunks, int src = 0,
             const Group& group = {}) {
  std::vector<T> flat;
  for (const auto& c : chunks) flat.insert(flat.end(), c.begin(), c.end());
  const bool on_src = get_rank(group) == src;
  if (on_src && (static_cast<int>(chunks.size()) != detail::group_size_checked(group, "scatter") ||
                 flat.size() != chunks.size() * output.size()))
    throw InvalidArgument("scatter: chunks must hold one vector of output.size() elements per rank");
  scatter(std::span<T>(output), std::span<const T>(flat), src, group);
}
DIST_API void scatter(Tensor& output, const std::vector<Tensor>& chunks, int src = 0,
                      const Group& group = {});
template <Element T, Element U>
Work scatter_async(std::span<T> output, std::span<U> input, int src = 0, const Group& group = {}) {
  return detail::track_unwaited(
      detail::scatter(detail::buffer_of(output), detail::input_of(input), src, group));
}

// reduce_scatter: input holds group-size × n elements; rank r gets the reduction of chunk r.
template <Element T, Element U>
void reduce_scatter(std::span<T> output, std::span<U> input, OpArg op = ReduceOp::sum,
                    const Group& group = {}) {
  detail::reduce_scatter(detail::buffer_of(output), detail::input_of(input), op, group).wait();
}
template <Element T>
std::vector<T> reduce_scatter(const std::vector<T>& input, OpArg op = ReduceOp::sum,
                              const Group& group = {}) {
  const auto n = static_cast<std::size_t>(detail::group_size_checked(group, "reduce_scatter"));
  std::vector<T> out(input.size() / n);
  reduce_scatter(std::span<T>(out), std::span<const T>(input), op, group);
  return out;
}
// The result has input's shape with the first dimension divided by the group size (or is 1-D).
DIST_API Tensor reduce_scatter(const Tensor& input, OpArg op = ReduceOp::sum,
                               const Group& group = {});
template <Element T, Element U>
Work reduce_scatter_async(std::span<T> output, std::span<U> input, OpArg op = ReduceOp::sum,
                          const Group& group = {}) {
  return detail::track_unwaited(
      detail::reduce_scatter(detail::buffer_of(output), detail::input_of(input), op, group));
}

// all_to_all: input and output hold group-size × n elements; output chunk j on rank r is input
// chunk r of rank j.
template <Element T, Element U>
void all_to_all(std::span<T> output, std::span<U> input, const Group& group = {}) {
  detail::all_to_all(detail::buffer_of(output), detail::input_of(input), group).wait();
}
template <Element T>
std::vector<T> all_to_all(const std::vector<T>& input, const Group& group = {}) {
  std::vector<T> out(input.size());
  all_to_all(std::span<T>(out), std::span<const T>(input), group);
  return out;
}
DIST_API Tensor all_to_all(const Tensor& input, const Group& group = {});
template <Element T, Element U>
Work all_to_all_async(std::span<T> output, std::span<U> input, const Group& group = {}) {
  return detail::track_unwaited(
      detail::all_to_all(detail::buffer_of(output), detail::input_of(input), group));
}

// all_to_all with split sizes (torch's all_to_all_single with output_split_sizes and
// input_split_sizes, as mixture-of-experts layers exchange tokens): the input_splits[j] elements
// after input's first j blocks go to group rank j, and output's block i (output_splits[i]
// elements) comes from group rank i. Splits hold one entry per group rank, none negative, summing
// to the buffer's count (InvalidArgument). Rank i's input_splits[j] must equal rank j's
// output_splits[i]: a pair that disagrees is a DesyncError on both, naming them and the sizes.
template <Element T, Element U>
void all_to_all(std::span<T> output, std::span<U> input,
                std::span<const std::int64_t> output_splits,
                std::span<const std::int64_t> input_splits, const Group& group = {}) {
  detail::all_to_all_v(detail::buffer_of(output), detail::input_of(input), output_splits,
                       input_splits, group)
      .wait();
}
template <Element T, Element U>
Work all_to_all_async(std::span<T> output, std::span<U> input,
                      std::span<const std::int64_t> output_splits,
                      std::span<const std::int64_t> input_splits, const Group& group = {}) {
  return detail::track_unwaited(detail::all_to_all_v(
      detail::buffer_of(output), detail::input_of(input), output_splits, input_splits, group));
}
// The list form, which learns the sizes itself (one all_to_all of the counts first): inputs[j]
// goes to group rank j, and result[i] came from group rank i; sizes may differ. inputs holds one
// list per group rank (InvalidArgument otherwise).
template <Element T>
std::vector<std::vector<T>> all_to_all(const std::vector<std::vector<T>>& inputs,
                                       const Group& group = {}) {
  const auto n = static_cast<std::size_t>(detail::group_size_checked(group, "all_to_all"));
  if (inputs.size() != n)
    throw InvalidArgument("all_to_all: " + std::to_string(inputs.size()) +
                          " input lists for a group of " + std::to_string(n) +
                          " ranks (inputs[j] goes to group rank j)");
  std::vector<std::int64_t> input_splits, output_splits(n);
  std::vector<T> flat;
  for (const auto& v : inputs) {
    input_splits.push_back(static_cast<std::int64_t>(v.size()));
    flat.insert(flat.end(), v.begin(), v.end());
  }
  if (n > 1)
    all_to_all(std::span<std::int64_t>(output_splits), std::span<const std::int64_t>(input_splits),
               group);
  else output_splits = input_splits;
  std::size_t total = 0;
  for (const std::int64_t s : output_splits) total += static_cast<std::size_t>(s);
  std::vector<T> out(total);
  all_to_all(std::span<T>(out), std::span<const T>(flat), output_splits, input_splits, group);
  std::vector<std::vector<T>> result;
  auto first = out.begin();
  for (const std::int64_t s : output_splits) {
    result.emplace_back(first, first + static_cast<std::ptrdiff_t>(s));
    first += static_cast<std::ptrdiff_t>(s);
  }
  return result;
}

// Tensors in, tensors out, as torch's newer names take them (flat: only the element counts
// matter, checked as the span forms check them). all_gather_into_tensor: output holds group
// size × input's elements, rank r's input at slot r. reduce_scatter_tensor: input holds group
// size × output's elements; output gets this rank's chunk of the reduction.
DIST_API void all_gather_into_tensor(Tensor& output, const Tensor& input, const Group& group = {});
DIST_API Work all_gather_into_tensor_async(Tensor& output, const Tensor& input,
                                           const Group& group = {});
DIST_API void reduce_scatter_tensor(Tensor& output, const Tensor& input, OpArg op = ReduceOp::sum,
                                    const Group& group = {});
DIST_API Work reduce_scatter_tensor_async(Tensor& output, const Tensor& input,
                                          OpArg op = ReduceOp::sum, const Group& group = {});
// The _async Tensor forms of the rest: reduce in place, and the flat gather, scatter and
// all_to_all (torch's all_to_all_single) with the caller's output.
DIST_API Work reduce_async(Tensor& data, int dst = 0, OpArg op = ReduceOp::sum,
                           const Group& group = {});
DIST_API Work gather_async(Tensor& output, const Tensor& input, int dst = 0,
                           const Group& group = {});
DIST_API Work scatter_async(Tensor& output, const Tensor& input, int src = 0,
                            const Group& group = {});
DIST_API Work all_to_all_async(Tensor& output, const Tensor& input, const Group& group = {});

}  // namespace dist
