// The dist::Tensor forms of the collectives and point-to-point calls: thin wrappers that turn a
// Tensor into a BufferRef and shape the results.
#include <string>

#include "dist/collectives.hpp"
#include "dist/p2p.hpp"

namespace dist {

namespace detail {
BufferRef buffer_of(const Tensor& t) {
  return {const_cast<void*>(t.data()), t.numel(), t.dtype(), t.device()};
}

std::vector<Tensor> split_tensor(const Tensor& flat, int n, const std::vector<std::int64_t>& shape) {
  std::vector<Tensor> out;
  const std::size_t chunk = n > 0 ? flat.numel() / static_cast<std::size_t>(n) : 0;
  for (int i = 0; i < n; ++i) out.push_back(flat.sub(chunk * static_cast<std::size_t>(i), shape));
  return out;
}
}  // namespace detail

namespace {
std::vector<std::int64_t> flat_shape(std::size_t numel) {
  return {static_cast<std::int64_t>(numel)};
}

// input's shape with the first dimension divided by n when it divides, else 1-D.
std::vector<std::int64_t> divided_shape(const Tensor& input, int n) {
  auto shape = input.shape();
  if (!shape.empty() && n > 0 && shape[0] % n == 0) {
    shape[0] /= n;
    return shape;
  }
  return flat_shape(input.numel() / static_cast<std::size_t>(n > 0 ? n : 1));
}
}  // namespace

void all_reduce(Tensor& data, OpArg op, const Group& group) {
  all_reduce_async(data, std::move(op), group).wait();
}
Work all_reduce_async(Tensor& data, OpArg op, const Group& group) {
  return detail::track_unwaited(detail::all_reduce(detail::buffer_of(data), op, group));
}

void broadcast(Tensor& data, int src, const Group& group) {
  broadcast_async(data, src, group).wait();
}
Work broadcast_async(Tensor& data, int src, const Group& group) {
  return detail::track_unwaited(detail::broadcast(detail::buffer_of(data), src, group));
}

void reduce(Tensor& data, int dst, OpArg op, const Group& group) {
  detail::reduce(detail::buffer_of(data), dst, op, group).wait();
}

std::vector<Tensor> all_gather(const Tensor& data, const Group& group) {
  const int n = detail::group_size_checked(group, "all_gather");
  Tensor flat = Tensor::empty(flat_shape(data.numel() * static_cast<std::size_t>(n)), data.dtype(),
                              data.device());
  detail::all_gather(detail::buffer_of(flat), detail::input_of(data), group).wait();
  return detail::split_tensor(flat, n, data.shape());
}

std::vector<Tensor> gather(const Tensor& data, int dst, const Group& group) {
  const int n = detail::group_size_checked(group, "gather");
  const bool on_dst = get_rank(group) == dst;
  Tensor flat = Tensor::empty(flat_shape(on_dst ? data.numel() * static_cast<std::size_t>(n) : 0),
                              data.dtype(), data.device());
  detail::gather(detail::buffer_of(flat), detail::input_of(data), dst, group).wait();
  if (!on_dst) return {};
  return detail::split_tensor(flat, n, data.shape());
}

void scatter(Tensor& output, const std::vector<Tensor>& chunks, int src, const Group& group) {
  const int n = detail::group_size_checked(group, "scatter");
  Tensor flat;
  if (get_rank(group) == src) {
    if (static_cast<int>(chunks.size()) != n)
      throw InvalidArgument("scatter: argument 'chunks' holds " + std::to_string(chunks.size()) +
                            " tensors but the group has " + std::to_string(n) + " ranks");
    flat = Tensor::empty(flat_shape(output.numel() * static_cast<std::size_t>(n)), output.dtype(),
                         output.device());
    for (int i = 0; i < n; ++i) {
      Tensor part = flat.sub(output.numel() * static_cast<std::size_t>(i), output.shape());
      part.copy_from(chunks[static_cast<std::size_t>(i)]);
    }
  }
  detail::scatter(detail::buffer_of(output), detail::input_of(flat), src, group).wait();
}

Tensor reduce_scatter(const Tensor& input, OpArg op, const Group& group) {
  const int n = detail::group_size_checked(group, "reduce_scatter");
  Tensor out = Tensor::empty(divided_shape(input, n), input.dtype(), input.device());
  detail::reduce_scatter(detail::buffer_of(out), detail::input_of(input), op, group).wait();
  return out;
}

Tensor all_to_all(const Tensor& input, const Group& group) {
  Tensor out = Tensor::empty(input.shape(), input.dtype(), input.device());
  detail::all_to_all(detail::buffer_of(out), detail::input_of(input), group).wait();
  return out;
}

void send(const Tensor& data, int dst, int tag, const Group& group) {
  detail::send(detail::input_of(data), dst, tag, group).wait();
}
int recv(Tensor& data, int src, int tag, const Group& group) {
  Work work = detail::recv(detail::buffer_of(data), src, tag, group);
  work.wait();
  return work.source();
}
Work isend(const Tensor& data, int dst, int tag, const Group& group) {
  return detail::track_unwaited_send(detail::send(detail::input_of(data), dst, tag, group),
                                     detail::input_of(data));
}
Work irecv(Tensor& data, int src, int tag, const Group& group) {
  return detail::track_unwaited(detail::recv(detail::buffer_of(data), src, tag, group));
}

void all_gather_into_tensor(Tensor& output, const Tensor& input, const Group& group) {
  all_gather_into_tensor_async(output, input, group).wait();
}
Work all_gather_into_tensor_async(Tensor& output, const Tensor& input, const Group& group) {
  return detail::track_unwaited(
      detail::all_gather(detail::buffer_of(output), detail::input_of(input), group));
}

void reduce_scatter_tensor(Tensor& output, const Tensor& input, OpArg op, const Group& group) {
  reduce_scatter_tensor_async(output, input, std::move(op), group).wait();
}
Work reduce_scatter_tensor_async(Tensor& output, const Tensor& input, OpArg op,
                                 const Group& group) {
  return detail::track_unwaited(
      detail::reduce_scatter(detail::buffer_of(output), detail::input_of(input), op, group));
}

Work reduce_async(Tensor& data, int dst, OpArg op, const Group& group) {
  return detail::track_unwaited(detail::reduce(detail::buffer_of(data), dst, op, group));
}
Work gather_async(Tensor& output, const Tensor& input, int dst, const Group& group) {
  return detail::track_unwaited(
      detail::gather(detail::buffer_of(output), detail::input_of(input), dst, group));
}
Work scatter_async(Tensor& output, const Tensor& input, int src, const Group& group) {
  return detail::track_unwaited(
      detail::scatter(detail::buffer_of(output), detail::input_of(input), src, group));
}
Work all_to_all_async(Tensor& output, const Tensor& input, const Group& group) {
  return detail::track_unwaited(
      detail::all_to_all(detail::buffer_of(output), detail::input_of(input), group));
}

}  // namespace dist
