// The reference collectives: pure sequential functions from all ranks' inputs to all ranks'
// outputs (index = rank). The executable specification every backend is tested against.
// Standard library only. Point-to-point (p2p) is in p2p.hpp, included at the end.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "reference/reduce_op.hpp"
#include "reference/validate.hpp"

namespace dist::reference {

namespace detail {

// Element-wise fold over the ranks (rank order) of in[r][offset, offset + count).
template <Element T>
std::vector<T> reduce_slice(const PerRank<T>& in, std::size_t offset, std::size_t count, Op op) {
  std::vector<T> out;
  out.reserve(count);
  std::vector<T> column(in.size());
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t r = 0; r < in.size(); ++r) column[r] = in[r][offset + i];
    out.push_back(fold(std::span<const T>(column), op));
  }
  return out;
}

template <class T>
std::vector<T> concatenate(const PerRank<T>& in) {
  std::vector<T> out;
  for (const auto& part : in) out.insert(out.end(), part.begin(), part.end());
  return out;
}

template <class T>
std::vector<T> chunk(const std::vector<T>& v, std::size_t index, std::size_t n) {
  const auto first = v.begin() + static_cast<std::ptrdiff_t>(index * n);
  return std::vector<T>(first, first + static_cast<std::ptrdiff_t>(n));
}

}  // namespace detail

// Every rank gets the element-wise fold of all ranks' inputs, in rank order (see fold()).
// Errors: world 0, counts differ, op illegal for T.
template <Element T>
PerRank<T> all_reduce(const PerRank<T>& in, Op op) {
  constexpr std::string_view where = "all_reduce";
  const std::size_t count = detail::check_counts(where, in);
  require_op_allowed<T>(op, where);
  return PerRank<T>(in.size(), detail::reduce_slice(in, 0, count, op));
}

// premul_sum's inputs (torch's _make_nccl_premul_sum): every element times `factor`, in double
// for double and in float otherwise (halves rounded once). The premul_sum collectives are the
// sum collectives (all_reduce, reduce, reduce_scatter with Op::sum) of these inputs.
template <Element T>
requires(!std::integral<T>) PerRank<T> premultiplied(const PerRank<T>& in, double factor) {
  PerRank<T> out = in;
  for (auto& part : out)
    for (T& x : part) {
      if constexpr (std::same_as<T, double>) x = x * factor;
      else if constexpr (std::same_as<T, float>) x = x * static_cast<float>(factor);
      else x = detail::round_to<T>(to_float(x) * static_cast<float>(factor));
    }
  return out;
}

// root gets the fold of all ranks (rank order); every other rank's output equals its input.
// Errors: world 0, root out of range, counts differ, op illegal for T.
template <Element T>
PerRank<T> reduce(const PerRank<T>& in, Op op, int root) {
  constexpr std::string_view where = "reduce";
  detail::check_world(where, in.size());
  detail::check_root(where, root, in.size());
  const std::size_t count = detail::check_counts(where, in);
  require_op_allowed<T>(op, where);
  PerRank<T> out = in;
  out[static_cast<std::size_t>(root)] = detail::reduce_slice(in, 0, count, op);
  return out;
}

// Everyone gets in[root]. Errors: world 0, root out of range, counts differ.
template <class T>
PerRank<T> broadcast(const PerRank<T>& in, int root) {
  constexpr std::string_view where = "broadcast";
  detail::check_world(where, in.size());
  detail::check_root(where, root, in.size());
  detail::check_counts(where, in);
  return PerRank<T>(in.size(), in[static_cast<std::size_t>(root)]);
}

// Every rank gets the concatenation of all inputs in rank order. Errors: world 0, counts differ.
template <class T>
PerRank<T> all_gather(const PerRank<T>& in) {
  detail::check_counts("all_gather", in);
  return PerRank<T>(in.size(), detail::concatenate(in));
}

// root gets the concatenation in rank order; every other rank gets an empty vector.
// Errors: world 0, root out of range, counts differ.
template <class T>
PerRank<T> gather(const PerRank<T>& in, int root) {
  constexpr std::string_view where = "gather";
  detail::check_world(where, in.size());
  detail::check_root(where, root, in.size());
  detail::check_counts(where, in);
  PerRank<T> out(in.size());
  out[static_cast<std::size_t>(root)] = detail::concatenate(in);
  return out;
}

// root_input (root's buffer) holds world * n elements; rank r gets chunk r (elements [r*n, (r+1)*n)).
// Errors: world < 1, root out of range, root_input.size() not divisible by world.
template <class T>
PerRank<T> scatter(const std::vector<T>& root_input, int world, int root) {
  constexpr std::string_view where = "scatter";
  detail::check_world(where, world);
  const auto w = static_cast<std::size_t>(world);
  detail::check_root(where, root, w);
  detail::check_divisible(where, root_input.size(), w);
  const std::size_t n = root_input.size() / w;
  PerRank<T> out;
  for (std::size_t r = 0; r < w; ++r) out.push_back(detail::chunk(root_input, r, n));
  return out;
}

// Each in[r] holds world * n elements; rank r gets the element-wise fold (rank order) of every
// rank's chunk r. Errors: world 0, counts differ, count not divisible by world, op illegal for T.
template <Element T>
PerRank<T> reduce_scatter(const PerRank<T>& in, Op op) {
  constexpr std::string_view where = "reduce_scatter";
  const std::size_t count = detail::check_counts(where, in);
  detail::check_divisible(where, count, in.size());
  require_op_allowed<T>(op, where);
  const std::size_t n = count / in.size();
  PerRank<T> out;
  for (std::size_t r = 0; r < in.size(); ++r) out.push_back(detail::reduce_slice(in, r * n, n, op));
  return out;
}

// Each in[r] holds world * n elements; chunk j of out[r] is chunk r of in[j].
// Errors: world 0, counts differ, count not divisible by world.
template <class T>
PerRank<T> all_to_all(const PerRank<T>& in) {
  constexpr std::string_view where = "all_to_all";
  const std::size_t count = detail::check_counts(where, in);
  detail::check_divisible(where, count, in.size());
  const std::size_t n = count / in.size();
  PerRank<T> out(in.size());
  for (std::size_t r = 0; r < in.size(); ++r) {
    for (std::size_t j = 0; j < in.size(); ++j) {
      const std::vector<T> part = detail::chunk(in[j], r, n);
      out[r].insert(out[r].end(), part.begin(), part.end());
    }
  }
  return out;
}

// Uneven all_to_all (torch's all_to_all_single with split sizes): rank r sends the
// splits[r][j] elements of in[r] after its first j blocks to rank j, and out[j] holds what every
// rank sent it, in rank order. Errors: world 0, a rank without one split per rank, splits that do
// not sum to the rank's input.
template <class T>
PerRank<T> all_to_all_v(const PerRank<T>& in, const std::vector<std::vector<std::size_t>>& splits) {
  constexpr std::string_view where = "all_to_all_v";
  detail::check_world(where, static_cast<int>(in.size()));
  if (splits.size() != in.size()) detail::invalid(where, "one list of splits per rank is required");
  PerRank<T> out(in.size());
  for (std::size_t r = 0; r < in.size(); ++r) {
    if (splits[r].size() != in.size())
      detail::invalid(where, "rank " + std::to_string(r) + " needs one split per rank");
    std::size_t offset = 0;
    for (std::size_t j = 0; j < in.size(); ++j) {
      if (offset + splits[r][j] > in[r].size())
        detail::invalid(where, "rank " + std::to_string(r) + "'s splits exceed its input");
      const auto first = in[r].begin() + static_cast<std::ptrdiff_t>(offset);
      out[j].insert(out[j].end(), first, first + static_cast<std::ptrdiff_t>(splits[r][j]));
      offset += splits[r][j];
    }
    if (offset != in[r].size())
      detail::invalid(where, "rank " + std::to_string(r) + "'s splits do not sum to its input");
  }
  return out;
}

// No data moves. Validates world >= 1; its meaning (nobody leaves before all arrive) is tested on
// the backends.
inline void barrier(int world) { detail::check_world("barrier", world); }

}  // namespace dist::reference

#include "reference/p2p.hpp"
