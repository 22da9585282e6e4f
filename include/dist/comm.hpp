// dist::comm: detectron2's detectron2.utils.comm helpers, where they differ from MMEngine's
// (object all_gather/gather on a side group, shared_random_seed, reduce_dict, the local process
// group). Written over the public API, so they behave the same on every backend.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dist/api.hpp"
#include "dist/export.hpp"
#include "dist/objects.hpp"
#include "dist/tensor.hpp"

namespace dist::comm {

// detectron2's queries take no group: these are the world's (same as dist::).
using dist::get_local_rank;
using dist::get_local_size;
using dist::get_rank;
using dist::get_world_size;
using dist::is_main_process;

// Barrier over the world; a no-op when not distributed or the world has one rank.
DIST_API void synchronize();

// The group object gathers (all_gather, gather, shared_random_seed) use when given none. The
// default is the world group. detectron2 gathers objects on a gloo group over all ranks to keep
// them off GPU memory when the default backend is nccl; dist does not create one implicitly: make
// a group over every rank on a CPU backend and install it here (per rank; every rank should
// install the same group), or pass a group to each call. nullopt restores the world group.
// The group must contain every rank of the world (InvalidArgument otherwise).
DIST_API void set_object_group(std::optional<Group> group);
// The installed object group (a default Group, meaning the world, when none is installed).
DIST_API Group object_group();

// Every rank's object in group-rank order; [data] when the world (or the group) has one rank.
// Without a group, the object group.
template <class T>
std::vector<T> all_gather(const T& data, const std::optional<Group>& group = std::nullopt) {
  if (dist::get_world_size() == 1) return std::vector<T>(1, data);
  return all_gather_object(data, group ? *group : object_group());
}

// On dst (a rank of the group), every rank's object in group-rank order; an EMPTY list on the
// other ranks (MMEngine's gather_object gives nullopt there). [data] when the world or the group
// has one rank.
template <class T>
std::vector<T> gather(const T& data, int dst = 0,
                      const std::optional<Group>& group = std::nullopt) {
  if (dist::get_world_size() == 1) return std::vector<T>(1, data);
  auto out = gather_object(data, dst, group ? *group : object_group());
  return out ? std::move(*out) : std::vector<T>{};
}

// A random number in [0, 2^31) shared by all ranks: every rank draws one from its random stream
// and the draws are all-gathered on the object group; rank 0's is returned.
DIST_API int shared_random_seed();

// reduce_dict: the values summed to rank 0 (dist::reduce over the world, keys sorted, one buffer),
// and averaged there when `average` (the `mean` op: integers are truncated toward zero). Returns
// a new dict; only rank 0's values are meaningful (the other ranks get their own values back).
// A world of fewer than 2 ranks returns the input unchanged. Keys, sizes and dtypes must agree
// across ranks (DesyncError on every rank otherwise, as all_reduce_dict). Values may be any
// shape (detectron2 requires equal-shaped scalars); Tensor values follow all_reduce_dict's dtype
// rule.
template <Element T>
std::map<std::string, T> reduce_dict(const std::map<std::string, T>& input, bool average = true) {
  if (dist::get_world_size() < 2) return input;
  detail::DictLayout layout;
  std::vector<T> flat;
  for (const auto& [key, value] : input) {
    layout.add(key, 1, dtype_v<T>);
    flat.push_back(value);
  }
  detail::check_dict_layout(layout, ReduceOp::sum, {}, "reduce_dict");
  dist::reduce(flat, 0, average ? ReduceOp::mean : ReduceOp::sum);
  std::map<std::string, T> out;
  std::size_t i = 0;
  for (const auto& [key, value] : input) out.emplace(key, flat[i++]);
  return out;
}
template <Element T>
std::map<std::string, std::vector<T>> reduce_dict(
    const std::map<std::string, std::vector<T>>& input, bool average = true) {
  if (dist::get_world_size() < 2) return input;
  detail::DictLayout layout;
  std::vector<T> flat;
  for (const auto& [key, value] : input) {
    layout.add(key, value.size(), dtype_v<T>);
    flat.insert(flat.end(), value.begin(), value.end());
  }
  detail::check_dict_layout(layout, ReduceOp::sum, {}, "reduce_dict");
  dist::reduce(flat, 0, average ? ReduceOp::mean : ReduceOp::sum);
  std::map<std::string, std::vector<T>> out;
  auto it = flat.begin();
  for (const auto& [key, value] : input) {
    const auto end = it + static_cast<std::ptrdiff_t>(value.size());
    out.emplace(key, std::vector<T>(it, end));
    it = end;
  }
  return out;
}
DIST_API std::map<std::string, Tensor> reduce_dict(const std::map<std::string, Tensor>& input,
                                                   bool average = true);

// Creates the per-machine groups: machine m holds ranks [m*n, (m+1)*n). Like detectron2, every
// rank calls new_group once per machine, in order, and keeps its own machine's group, which then
// is what get_local_group/get_local_rank/get_local_size return. A repeat call with the same n
// returns the same group; a different n raises InvalidArgument, as does a world size not
// divisible by n (or n <= 0). Not distributed: NotInitialized. Every rank must call it.
DIST_API Group create_local_process_group(int workers_per_machine);
// The local group: the one create_local_process_group made, or the launcher's node group (sim's
// Cluster nodes, init_dist's LOCAL_WORLD_SIZE). NotInitialized when there is none, or when not
// distributed (as detectron2 asserts).
DIST_API Group get_local_process_group();

}  // namespace dist::comm
