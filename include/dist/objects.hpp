// MMEngine's object helpers: object collectives, all_reduce_dict, sync_random_seed, collect_results.
// Written once above the backend interface, so they behave the same on every backend. Objects are
// any type cereal can serialize (this header includes cereal's support for the STL types).
//
// Common rules:
// - A group of one rank (or no distributed context) is the identity, as in MMEngine.
// - Objects are serialized with cereal's binary format (dist::detail::ObjectOutputArchive). Bytes
//   that do not decode as the receiver's type (corrupt, truncated, or a different type passed on
//   another rank) raise InvalidArgument on the receiving rank, naming the function, the source
//   rank (within the group) and cereal's reason; they never crash.
// - `src`/`dst` are ranks within `group`.
// - Object bytes travel on the group's backend as uint8 buffers (staged through its device).
#pragma once

#include <algorithm>
#include <cereal/types/array.hpp>
#include <cereal/types/chrono.hpp>
#include <cereal/types/complex.hpp>
#include <cereal/types/deque.hpp>
#include <cereal/types/list.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/memory.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/set.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/tuple.hpp>
#include <cereal/types/unordered_map.hpp>
#include <cereal/types/unordered_set.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dist/api.hpp"
#include "dist/collectives.hpp"
#include "dist/detail/object_archive.hpp"
#include "dist/detail/object_transport.hpp"
#include "dist/export.hpp"
#include "dist/tensor.hpp"
#include "dist/types.hpp"

namespace dist {

// broadcast_object_list: every rank's `list` becomes src's (in place). Every rank passes a list of
// the same length (a different length raises DesyncError on every rank); elements on the other
// ranks are overwritten.
template <class T>
void broadcast_object_list(std::vector<T>& list, int src = 0, const Group& group = {}) {
  if (detail::group_size_checked(group, "broadcast_object_list") == 1) return;
  const bool on_src = get_rank(group) == src;
  std::vector<std::byte> data;
  std::vector<std::uint64_t> sizes;
  if (on_src)
    for (const T& item : list) {
      const std::size_t before = data.size();
      {
        detail::ObjectOutputArchive ar(data);  // data has its final size once ar is gone
        ar(item);
      }
      sizes.push_back(data.size() - before);
    }
  detail::broadcast_bytes(list.size(), data, sizes, src, group);
  if (on_src) return;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto n = static_cast<std::size_t>(sizes[i]);
    list[i] = detail::from_bytes<T>(std::span<const std::byte>(data).subspan(offset, n),
                                    "broadcast_object_list", src);
    offset += n;
  }
}

// scatter_object_list: src's inputs[r] becomes group rank r's result (inputs used on src only,
// one per group rank: another length raises InvalidArgument on every rank). Objects may have
// different sizes: each rank's size is scattered first, then the objects padded to the largest.
template <class T>
T scatter_object_list(const std::vector<T>& inputs, int src = 0, const Group& group = {}) {
  if (detail::group_size_checked(group, "scatter_object_list") == 1) {
    if (inputs.size() != 1)
      throw InvalidArgument("scatter_object_list: src passed " + std::to_string(inputs.size()) +
                            " inputs for a group of 1 rank; it must pass one object per rank");
    return inputs.front();
  }
  std::vector<std::byte> data;
  std::vector<std::uint64_t> sizes;
  if (get_rank(group) == src)
    for (const T& item : inputs) {
      const std::size_t before = data.size();
      detail::append_bytes(item, data);
      sizes.push_back(data.size() - before);
    }
  detail::ReusedBytes mine;
  detail::scatter_bytes(data, sizes, src, group, mine.bytes);
  return detail::from_bytes<T>(mine.bytes, "scatter_object_list", src);
}

// all_gather_object: every rank gets every rank's object, in group-rank order. Objects may have
// very different sizes: the sizes are exchanged first, then one variable-size all_gather.
template <class T> std::vector<T> all_gather_object(const T& obj, const Group& group = {}) {
  if (detail::group_size_checked(group, "all_gather_object") == 1) return std::vector<T>(1, obj);
  detail::ReusedBytes mine;
  detail::append_bytes(obj, mine.bytes);
  const auto bytes = detail::all_gather_bytes(mine.bytes, group);
  std::vector<T> out;
  out.reserve(bytes.sizes.size());
  for (std::size_t r = 0; r < bytes.sizes.size(); ++r)
    out.push_back(detail::from_bytes<T>(bytes.part(r), "all_gather_object", static_cast<int>(r)));
  return out;
}

// gather_object: dst gets every rank's object in group-rank order; the other ranks get nullopt
// (MMEngine's None; detectron2's comm::gather returns an empty list instead).
template <class T>
std::optional<std::vector<T>> gather_object(const T& obj, int dst = 0, const Group& group = {}) {
  if (detail::group_size_checked(group, "gather_object") == 1) return std::vector<T>(1, obj);
  detail::ReusedBytes mine;
  detail::append_bytes(obj, mine.bytes);
  const auto bytes = detail::gather_bytes(mine.bytes, dst, group, "gather_object");
  if (!bytes) return std::nullopt;
  std::vector<T> out;
  out.reserve(bytes->sizes.size());
  for (std::size_t r = 0; r < bytes->sizes.size(); ++r)
    out.push_back(detail::from_bytes<T>(bytes->part(r), "gather_object", static_cast<int>(r)));
  return out;
}

// all_reduce_dict: every value becomes the reduction of that key's values on all ranks (in place).
// Keys are sorted (std::map order), the values flattened into one buffer, reduced with a single
// all_reduce (so `op`, integer `mean` and the one-rank shortcut follow all_reduce), and split back.
// Every rank must hold the same keys with the same value sizes (and dtypes): otherwise every rank
// raises DesyncError naming the keys each rank lacks or adds, whatever the backend.
// Values: a vector of an Element type, an Element scalar, or a dist::Tensor. Tensor maps follow
// MMEngine in replacing each value with a new tensor (a view of the reduced buffer, back on the
// value's device); the caller's tensors are not modified. Dtype rule: all tensors of a map must
// share one dtype; mixed dtypes raise InvalidArgument (MMEngine promotes with torch's rules,
// e.g. int64 + float32 -> float32 for every key; cast the values first to get that).
template <Element T>
void all_reduce_dict(std::map<std::string, std::vector<T>>& dict, OpArg op = ReduceOp::sum,
                     const Group& group = {}) {
  detail::DictLayout layout;
  std::size_t total = 0;
  for (const auto& [key, value] : dict) {
    layout.add(key, value.size(), dtype_v<T>);
    total += value.size();
  }
  if (!detail::check_dict_layout(layout, op, group, "all_reduce_dict")) return;
  std::vector<T> flat;
  flat.reserve(total);
  for (const auto& [key, value] : dict) flat.insert(flat.end(), value.begin(), value.end());
  all_reduce(flat, op, group);
  auto it = flat.begin();
  for (auto& [key, value] : dict) {
    std::copy(it, it + static_cast<std::ptrdiff_t>(value.size()), value.begin());
    it += static_cast<std::ptrdiff_t>(value.size());
  }
}
template <Element T>
void all_reduce_dict(std::map<std::string, T>& dict, OpArg op = ReduceOp::sum,
                     const Group& group = {}) {
  detail::DictLayout layout;
  for (const auto& [key, value] : dict) layout.add(key, 1, dtype_v<T>);
  if (!detail::check_dict_layout(layout, op, group, "all_reduce_dict")) return;
  std::vector<T> flat;
  for (const auto& [key, value] : dict) flat.push_back(value);
  all_reduce(flat, op, group);
  std::size_t i = 0;
  for (auto& [key, value] : dict) value = flat[i++];
}
DIST_API void all_reduce_dict(std::map<std::string, Tensor>& dict, OpArg op = ReduceOp::sum,
                              const Group& group = {});

// sync_random_seed: a seed shared by the ranks of `group`. Every rank draws one value in
// [0, 2^31) from its random stream (so every rank's stream advances, like numpy's in MMEngine),
// and group rank 0's value is broadcast as an int32. On sim each rank's stream is seeded from
// Cluster.seed, so a seeded cluster gives the same seed on every run.
DIST_API int sync_random_seed(const Group& group = {});

namespace detail {
// MMEngine's order: for j = 0.. and each rank in order, element j of that rank's part if it has
// one (exhausted ranks are skipped; no element is dropped for its value), cut to `size`.
template <class T>
std::vector<T> round_robin(std::vector<std::vector<T>>& parts, std::size_t size) {
  std::size_t longest = 0, total = 0;
  for (const auto& p : parts) {
    longest = std::max(longest, p.size());
    total += p.size();
  }
  std::vector<T> out;
  out.reserve(std::min(total, size));
  for (std::size_t j = 0; j < longest; ++j)
    for (auto& p : parts) {
      if (out.size() == size) return out;
      if (j < p.size()) out.push_back(std::move(p[j]));
    }
  return out;
}
}  // namespace detail

// collect_results: the results of every rank of the world, on world rank 0 in MMEngine's order
// (round-robin over ranks, skipping exhausted ones, which undoes DefaultSampler's split), cut to
// the first `size`; std::nullopt on the other ranks. Checked first, even when not distributed:
// `device` must be "cpu" or "gpu" (anything else, e.g. "cuda", raises InvalidArgument), "gpu"
// takes no tmpdir, and size must be >= 0. A world of one rank returns part cut to `size`.
// - "gpu": all_gather_object of the parts on the world's backend (and its device).
// - "cpu": part files in a directory shared by all ranks. Without tmpdir, rank 0 creates
//   `.dist_test/` in its current directory if missing and a fresh directory inside it (mode 0700,
//   absolute path) whose path it broadcasts; with tmpdir, rank 0 creates it if missing (0700),
//   broadcasts it (rank 0's tmpdir is the one used), and every other rank creates it if missing.
//   Each rank writes part_<rank>.bin (mode 0600) with O_EXCL: an existing file is never
//   overwritten (InvalidArgument naming the path). After an all-rank status exchange, rank 0
//   reads every part (a missing one: BackendError naming the rank and saying the directory must be
//   shared), then removes the part files (each starts with a random token its writer reported,
//   checked first, so a file this call did not create is never removed), the directories it
//   created, and the collect directory whenever it is left empty. Non-zero ranks return only after
//   rank 0 has read and cleaned up. An error on any rank is raised on every rank.
template <class T>
std::optional<std::vector<T>> collect_results(const std::vector<T>& part, long size,
                                              std::string_view device = "cpu",
                                              std::optional<std::string> tmpdir = std::nullopt) {
  const bool gpu = detail::check_collect_args(device, tmpdir, size);
  const auto limit = static_cast<std::size_t>(size);
  if (get_world_size() == 1)
    return std::vector<T>(part.begin(),
                          part.begin() + static_cast<std::ptrdiff_t>(std::min(limit, part.size())));
  std::vector<std::vector<T>> parts;
  if (gpu) {
    parts = all_gather_object(part);
    if (get_rank() != 0) return std::nullopt;
  } else {
    detail::collect_part_files(detail::to_bytes(part), tmpdir,
                               [&](std::vector<std::vector<std::byte>>& bytes) {
                                 for (std::size_t r = 0; r < bytes.size(); ++r)
                                   parts.push_back(detail::from_bytes<std::vector<T>>(
                                       bytes[r], "collect_results", static_cast<int>(r)));
                               });
    if (get_rank() != 0) return std::nullopt;
  }
  return detail::round_robin(parts, limit);
}

}  // namespace dist
