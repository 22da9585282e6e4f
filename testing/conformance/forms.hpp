// The data forms every collective accepts (vector, span, host tensor, and a tensor on the
// communication device where the backend has one), and each collective called in a given form.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "testing/conformance/world.hpp"

namespace conformance {

enum class Form { vector, span, tensor, device };
const char* to_string(Form f);
// The forms checked at `count`: every form for small counts, one (rotating with `k`) for large.
std::vector<Form> forms_at(std::size_t count, std::size_t k);
// A Tensor shape holding `count` elements: 2-D for some counts, so shapes are checked.
std::vector<std::int64_t> shape_for(std::size_t count);
std::string upper(std::string_view s);

// A tensor of v in form f (host, or on the communication device), and its values back on the host.
template <class T> dist::Tensor tensor_in(Form f, std::vector<T> v, std::vector<std::int64_t> shape) {
  dist::Tensor t = dist::Tensor::from(std::move(v), std::move(shape));
  return f == Form::device ? t.to(dist::get_comm_device()) : t;
}
template <class T> std::vector<T> values_of(const dist::Tensor& t) {
  if (t.device() == dist::Device::cpu()) {
    auto v = t.values<T>();
    return {v.begin(), v.end()};
  }
  const dist::Tensor host = t.to(dist::Device::cpu());
  auto v = host.values<T>();
  return {v.begin(), v.end()};
}
template <class T> std::vector<T> concat(const PerRank<T>& parts) {
  std::vector<T> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// all_reduce with the op as a ReduceOp (vector), an MMEngine name (span) or an upper-case name
// (tensors, checking the case-insensitive parse).
template <class T> std::vector<T> all_reduce_in(Form f, dist::ReduceOp op, std::vector<T> v) {
  const std::string name(dist::to_string(op));
  switch (f) {
    case Form::vector: dist::all_reduce(v, op); return v;
    case Form::span: dist::all_reduce(std::span<T>(v), name); return v;
    case Form::tensor:
    case Form::device: {
      const auto shape = shape_for(v.size());
      dist::Tensor t = tensor_in(f, std::move(v), shape);
      dist::all_reduce(t, upper(name));
      require(t.shape() == shape, "all_reduce changed the tensor's shape");
      return values_of<T>(t);
    }
  }
  return {};
}

template <class T> std::vector<T> reduce_in(Form f, dist::ReduceOp op, int dst, std::vector<T> v) {
  switch (f) {
    case Form::vector: dist::reduce(v, dst, op); return v;
    case Form::span: dist::reduce(std::span<T>(v), dst, std::string(dist::to_string(op))); return v;
    case Form::tensor:
    case Form::device: {
      const auto shape = shape_for(v.size());
      dist::Tensor t = tensor_in(f, std::move(v), shape);
      dist::reduce(t, dst, op);
      require(t.shape() == shape, "reduce changed the tensor's shape");
      return values_of<T>(t);
    }
  }
  return {};
}

template <class T> std::vector<T> reduce_scatter_in(Form f, dist::ReduceOp op, int n, std::vector<T> in) {
  const std::size_t chunk = in.size() / static_cast<std::size_t>(n);
  if (f == Form::vector) return dist::reduce_scatter(in, op);
  if (f == Form::span) {
    std::vector<T> out(chunk);
    dist::reduce_scatter(std::span<T>(out), std::span<const T>(in), std::string(dist::to_string(op)));
    return out;
  }
  // A 2-D {world, chunk} input gives a {1, chunk} result; a large 1-D one a 1-D result.
  const auto c = static_cast<std::int64_t>(chunk);
  const bool flat = chunk >= 1000;
  const std::vector<std::int64_t> shape = flat ? std::vector<std::int64_t>{c * n}
                                               : std::vector<std::int64_t>{n, c};
  const std::vector<std::int64_t> expected_shape = flat ? std::vector<std::int64_t>{c}
                                                        : std::vector<std::int64_t>{1, c};
  const dist::Tensor out = dist::reduce_scatter(tensor_in(f, std::move(in), shape), op);
  require(out.shape() == expected_shape, "reduce_scatter: wrong result shape");
  require(out.dtype() == dist::dtype_v<T>, "reduce_scatter: wrong result dtype");
  return values_of<T>(out);
}

template <class T> std::vector<T> broadcast_in(Form f, int src, std::vector<T> v) {
  switch (f) {
    case Form::vector: dist::broadcast(v, src); return v;
    case Form::span: dist::broadcast(std::span<T>(v), src); return v;
    case Form::tensor:
    case Form::device: {
      const auto shape = shape_for(v.size());
      dist::Tensor t = tensor_in(f, std::move(v), shape);
      dist::broadcast(t, src);
      require(t.shape() == shape, "broadcast changed the tensor's shape");
      return values_of<T>(t);
    }
  }
  return {};
}

// Concatenates gathered parts after checking there are `parts` of `count` elements each.
template <class T> std::vector<T> joined(const PerRank<T>& got, std::size_t parts, std::size_t count) {
  require(got.size() == parts,
          "gathered " + std::to_string(got.size()) + " parts, expected " + std::to_string(parts));
  for (const auto& p : got) require(p.size() == count, "a gathered part has the wrong size");
  return concat(got);
}
template <class T>
std::vector<T> joined(const std::vector<dist::Tensor>& got, std::size_t parts,
                      const std::vector<std::int64_t>& shape) {
  PerRank<T> values;
  for (const auto& t : got) {
    require(t.shape() == shape && t.dtype() == dist::dtype_v<T>,
            "a gathered tensor has the wrong shape or dtype");
    values.push_back(values_of<T>(t));
  }
  return joined(values, parts, values.empty() ? 0 : values.front().size());
}

template <class T> std::vector<T> all_gather_in(Form f, std::vector<T> v) {
  const auto n = static_cast<std::size_t>(dist::get_world_size());
  const std::size_t count = v.size();
  if (f == Form::vector) return joined(dist::all_gather(v), n, count);
  if (f == Form::span) return joined(dist::all_gather(std::span<T>(v)), n, count);
  const auto shape = shape_for(count);
  return joined<T>(dist::all_gather(tensor_in(f, std::move(v), shape)), n, shape);
}

template <class T> std::vector<T> gather_in(Form f, int dst, std::vector<T> v) {
  const auto parts = dist::get_rank() == dst ? static_cast<std::size_t>(dist::get_world_size()) : 0;
  const std::size_t count = v.size();
  if (f == Form::vector) return joined(dist::gather(v, dst), parts, count);
  if (f == Form::span) return joined(dist::gather(std::span<const T>(v), dst), parts, count);
  const auto shape = shape_for(count);
  return joined<T>(dist::gather(tensor_in(f, std::move(v), shape), dst), parts, shape);
}

// src's input is root_input; the other ranks pass nothing (an empty input or chunk list).
template <class T>
std::vector<T> scatter_in(Form f, int src, std::size_t count, const std::vector<T>& root_input) {
  const bool on_src = dist::get_rank() == src;
  const int n = dist::get_world_size();
  std::vector<T> out(count, T{});
  const std::vector<T> none;
  if (f == Form::vector) {
    dist::scatter(out, on_src ? dist::detail::split_chunks(root_input, n) : PerRank<T>{}, src);
    return out;
  }
  if (f == Form::span) {
    dist::scatter(std::span<T>(out), std::span<const T>(on_src ? root_input : none), src);
    return out;
  }
  const auto shape = shape_for(count);
  std::vector<dist::Tensor> chunks;
  if (on_src)
    for (const auto& c : dist::detail::split_chunks(root_input, n)) chunks.push_back(tensor_in(f, c, shape));
  dist::Tensor t = tensor_in(f, std::vector<T>(count, T{}), shape);
  dist::scatter(t, chunks, src);
  require(t.shape() == shape, "scatter changed the output tensor's shape");
  return values_of<T>(t);
}

template <class T> std::vector<T> all_to_all_in(Form f, std::vector<T> in) {
  if (f == Form::vector) return dist::all_to_all(in);
  if (f == Form::span) {
    std::vector<T> out(in.size());
    dist::all_to_all(std::span<T>(out), std::span<T>(in));
    return out;
  }
  const auto n = static_cast<std::int64_t>(dist::get_world_size());
  const std::vector<std::int64_t> shape{n, static_cast<std::int64_t>(in.size()) / n};
  const dist::Tensor out = dist::all_to_all(tensor_in(f, std::move(in), shape));
  require(out.shape() == shape, "all_to_all: the result has the wrong shape");
  return values_of<T>(out);
}

}  // namespace conformance
