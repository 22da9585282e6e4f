// One collective call as data (kind, dtype, op, root, count, form), its generator, how a member
// rank executes it through the public API, and the reference's outputs for it.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

#include "dist/dist.hpp"
#include "props/generators.hpp"
#include "props/values.hpp"

namespace props {

enum class Kind : std::uint8_t {
  all_reduce,
  reduce,
  broadcast,
  all_gather,
  gather,
  scatter,
  reduce_scatter,
  all_to_all,
  barrier
};
inline constexpr Kind all_kinds[] = {Kind::all_reduce,     Kind::reduce,     Kind::broadcast,
                                     Kind::all_gather,     Kind::gather,     Kind::scatter,
                                     Kind::reduce_scatter, Kind::all_to_all, Kind::barrier};

// How the call is made: std::vector overloads, std::span overloads, dist::Tensor, or *_async on
// spans followed by Work::wait().
enum class Form : std::uint8_t { vector, span, tensor, async };

std::string_view to_string(Kind kind);
std::string_view to_string(Form form);
inline bool has_op(Kind k) {
  return k == Kind::all_reduce || k == Kind::reduce || k == Kind::reduce_scatter;
}
inline bool has_root(Kind k) {
  return k == Kind::reduce || k == Kind::broadcast || k == Kind::gather || k == Kind::scatter;
}
inline bool has_data(Kind k) { return k != Kind::barrier; }

// A collective on a group of `size` ranks. `count` is the per-rank unit: the data of all_reduce,
// reduce, broadcast, all_gather and gather; the output of scatter and reduce_scatter; one chunk
// of all_to_all. `root` is group-local; `op` matters only where has_op.
struct Call {
  Kind kind = Kind::all_reduce;
  dist::DType dtype = dist::DType::int32;
  dist::ReduceOp op = dist::ReduceOp::sum;
  int root = 0;
  std::size_t count = 0;
  Form form = Form::vector;
  friend bool operator==(const Call&, const Call&) = default;
};
std::ostream& operator<<(std::ostream& os, const Call& c);

// The elements each rank's input holds for `call` on a group of `size` ranks.
inline std::size_t input_count(const Call& c, int size) {
  const auto n = static_cast<std::size_t>(size);
  switch (c.kind) {
    case Kind::scatter:
    case Kind::reduce_scatter:
    case Kind::all_to_all:
      return c.count * n;
    case Kind::barrier:
      return 0;
    default:
      return c.count;
  }
}

namespace gen {
rc::Gen<Form> form();
// A call of `kind` on `dtype` for a group of `size` ranks, its count drawn from `counts`.
rc::Gen<Call> call(Kind kind, dist::DType dtype, int size, rc::Gen<std::size_t> counts = count());
// A call of any kind (barrier included).
rc::Gen<Call> any_call(dist::DType dtype, int size, rc::Gen<std::size_t> counts = count());
}  // namespace gen

namespace detail {
template <class T>
std::vector<T> concat(const PerRank<T>& parts) {
  std::vector<T> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
template <class T>
std::vector<T> values_of(const dist::Tensor& t) {
  const auto v = t.values<T>();
  return {v.begin(), v.end()};
}
// Inside a rank: fails the rank (and so the run) with `what` unless `ok`.
void require(bool ok, const char* what);

template <class T>
std::vector<T> in_place(const Call& c, std::vector<T> data, const dist::Group& g) {
  using dist::Tensor;
  const std::span<T> s(data);
  dist::Tensor t = Tensor::view(s);
  switch (c.kind) {
    case Kind::all_reduce:
      if (c.form == Form::vector)
        dist::all_reduce(data, c.op, g);
      else if (c.form == Form::span)
        dist::all_reduce(s, c.op, g);
      else if (c.form == Form::tensor)
        dist::all_reduce(t, c.op, g);
      else
        dist::all_reduce_async(s, c.op, g).wait();
      break;
    case Kind::reduce:
      if (c.form == Form::vector)
        dist::reduce(data, c.root, c.op, g);
      else if (c.form == Form::span)
        dist::reduce(s, c.root, c.op, g);
      else if (c.form == Form::tensor)
        dist::reduce(t, c.root, c.op, g);
      else
        dist::reduce_async(s, c.root, c.op, g).wait();
      break;
    default:  // broadcast
      if (c.form == Form::vector)
        dist::broadcast(data, c.root, g);
      else if (c.form == Form::span)
        dist::broadcast(s, c.root, g);
      else if (c.form == Form::tensor)
        dist::broadcast(t, c.root, g);
      else
        dist::broadcast_async(s, c.root, g).wait();
  }
  return data;
}

// all_gather and gather: the flat concatenation of the parts (empty on gather's non-roots).
template <class T>
std::vector<T> gathered(const Call& c, const std::vector<T>& data, const dist::Group& g) {
  const bool all = c.kind == Kind::all_gather;
  const int n = dist::get_world_size(g);
  const bool receives = all || dist::get_rank(g) == c.root;
  if (c.form == Form::async) {
    std::vector<T> out(receives ? data.size() * static_cast<std::size_t>(n) : 0);
    dist::Work w = all ? dist::all_gather_async(std::span<T>(out), std::span<const T>(data), g)
                       : dist::gather_async(std::span<T>(out), std::span<const T>(data), c.root, g);
    w.wait();
    require(w.is_completed(), "Work::is_completed() is false after wait()");
    return out;
  }
  PerRank<T> parts;
  if (c.form == Form::tensor) {
    const auto t = dist::Tensor::from(data);
    for (const auto& p : all ? dist::all_gather(t, g) : dist::gather(t, c.root, g))
      parts.push_back(values_of<T>(p));
  } else if (c.form == Form::span) {
    parts = all ? dist::all_gather(std::span<const T>(data), g)
                : dist::gather(std::span<const T>(data), c.root, g);
  } else {
    parts = all ? dist::all_gather(data, g) : dist::gather(data, c.root, g);
  }
  require(parts.size() == (receives ? static_cast<std::size_t>(n) : 0u),
          "a gather returned the wrong number of parts");
  for (const auto& p : parts)
    require(p.size() == data.size(), "a gathered part has the wrong size");
  return concat(parts);
}

// scatter, reduce_scatter and all_to_all: into a fresh output of the right size.
template <class T>
std::vector<T> exchanged(const Call& c, const std::vector<T>& in, const dist::Group& g) {
  std::vector<T> out(c.kind == Kind::all_to_all ? in.size() : c.count);
  const std::span<T> o(out);
  const std::span<const T> i(in);
  if (c.form == Form::async) {
    dist::Work w = c.kind == Kind::scatter          ? dist::scatter_async(o, i, c.root, g)
                   : c.kind == Kind::reduce_scatter ? dist::reduce_scatter_async(o, i, c.op, g)
                                                    : dist::all_to_all_async(o, i, g);
    w.wait();
    require(w.is_completed(), "Work::is_completed() is false after wait()");
  } else if (c.form == Form::span ||
             (c.form == Form::vector && c.kind == Kind::scatter && dist::get_rank(g) != c.root)) {
    if (c.kind == Kind::scatter)
      dist::scatter(o, i, c.root, g);
    else if (c.kind == Kind::reduce_scatter)
      dist::reduce_scatter(o, i, c.op, g);
    else
      dist::all_to_all(o, i, g);
  } else if (c.form == Form::vector) {
    if (c.kind == Kind::scatter) {
      const int n = dist::get_world_size(g);
      PerRank<T> chunks(static_cast<std::size_t>(n));
      for (std::size_t r = 0; r < chunks.size(); ++r)
        chunks[r].assign(in.begin() + static_cast<std::ptrdiff_t>(r * c.count),
                         in.begin() + static_cast<std::ptrdiff_t>((r + 1) * c.count));
      dist::scatter(out, chunks, c.root, g);
    } else {
      out = c.kind == Kind::reduce_scatter ? dist::reduce_scatter(in, c.op, g)
                                           : dist::all_to_all(in, g);
    }
  } else {
    const auto t = dist::Tensor::from(in);
    if (c.kind == Kind::scatter) {
      std::vector<dist::Tensor> chunks;
      if (dist::get_rank(g) == c.root)
        for (int r = 0; r < dist::get_world_size(g); ++r)
          chunks.push_back(
              t.sub(static_cast<std::size_t>(r) * c.count, {static_cast<std::int64_t>(c.count)}));
      dist::Tensor ot = dist::Tensor::view(o);
      dist::scatter(ot, chunks, c.root, g);
    } else {
      out = values_of<T>(c.kind == Kind::reduce_scatter ? dist::reduce_scatter(t, c.op, g)
                                                        : dist::all_to_all(t, g));
    }
  }
  return out;
}
}  // namespace detail

// Executes `call` on the calling rank (a member of `g`) with its input; returns what the rank
// sees afterwards: the data (all_reduce, reduce, broadcast), the flat concatenation of the parts
// (all_gather; gather on its root, empty elsewhere), the output (scatter, reduce_scatter,
// all_to_all), nothing (barrier).
template <class T>
std::vector<T> execute(const Call& c, std::vector<T> input, const dist::Group& g = {}) {
  switch (c.kind) {
    case Kind::all_reduce:
    case Kind::reduce:
    case Kind::broadcast:
      return detail::in_place(c, std::move(input), g);
    case Kind::all_gather:
    case Kind::gather:
      return detail::gathered(c, input, g);
    case Kind::barrier:
      if (c.form == Form::async)
        dist::barrier_async(g).wait();
      else
        dist::barrier(g);
      return {};
    default:
      return detail::exchanged(c, input, g);
  }
}

// The reference's outputs of `call` for the members' inputs, in group order.
template <class T>
PerRank<T> expected(const Call& c, const PerRank<T>& in) {
  const auto r = to_ref(in);
  const int n = static_cast<int>(in.size());
  switch (c.kind) {
    case Kind::all_reduce:
      return from_ref<T>(ref::all_reduce(r, to_ref(c.op)));
    case Kind::reduce:
      return from_ref<T>(ref::reduce(r, to_ref(c.op), c.root));
    case Kind::broadcast:
      return from_ref<T>(ref::broadcast(r, c.root));
    case Kind::all_gather:
      return from_ref<T>(ref::all_gather(r));
    case Kind::gather:
      return from_ref<T>(ref::gather(r, c.root));
    case Kind::scatter:
      return from_ref<T>(ref::scatter(r[static_cast<std::size_t>(c.root)], n, c.root));
    case Kind::reduce_scatter:
      return from_ref<T>(ref::reduce_scatter(r, to_ref(c.op)));
    case Kind::all_to_all:
      return from_ref<T>(ref::all_to_all(r));
    case Kind::barrier:
      ref::barrier(n);
      return PerRank<T>(in.size());
  }
  return {};
}

}  // namespace props
