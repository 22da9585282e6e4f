// new_subgroups and init_device_mesh: layouts of groups, each made by one split of the world
// (core::make_layout_group), as MPI_Comm_split and ncclCommSplit split by color and key.
#include "dist/mesh.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

#include "core/layout.hpp"
#include "dist/errors.hpp"

namespace dist {

namespace {
// The caller's group of `layout` (the first one when no list holds it) and all of them.
std::pair<Group, Subgroups> make_groups(const core::Layout& layout) {
  Group mine = core::make_layout_group(layout, "new_subgroups");
  auto all = core::layout_subgroups(layout, mine);
  return {std::move(mine), std::move(all)};
}

std::string shape_text(const std::vector<int>& shape) {
  std::string out = "{";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "}";
}
}  // namespace

std::pair<Group, Subgroups> new_subgroups(int group_size) {
  const int world = get_world_size();
  if (group_size == 0) group_size = is_distributed() ? get_local_size() : 1;
  if (group_size < 0 || world % group_size != 0)
    throw InvalidArgument("new_subgroups: group_size " + std::to_string(group_size) +
                          " must be positive and divide the world size " + std::to_string(world));
  return make_groups(core::strided_layout(world, group_size, 1, get_rank()));
}

std::pair<Group, Subgroups> new_subgroups_by_enumeration(
    const std::vector<std::vector<int>>& ranks_per_subgroup) {
  if (ranks_per_subgroup.empty())
    throw InvalidArgument("new_subgroups_by_enumeration: argument 'ranks_per_subgroup' is empty");
  std::set<int> seen;
  for (const auto& ranks : ranks_per_subgroup)
    for (const int r : ranks)
      if (!seen.insert(r).second)
        throw InvalidArgument("new_subgroups_by_enumeration: rank " + std::to_string(r) +
                              " is in more than one subgroup");
  core::check_layout_lists(ranks_per_subgroup, "new_subgroups");
  // The Subgroups returned outlive the caller's lists: their groups read a copy.
  return make_groups(core::listed_layout(
      std::make_shared<const std::vector<std::vector<int>>>(ranks_per_subgroup), get_rank()));
}

DeviceMesh::DeviceMesh(std::vector<int> shape, std::vector<std::string> dim_names,
                       std::vector<int> coordinate, std::vector<Group> groups)
    : shape_(std::move(shape)),
      names_(std::move(dim_names)),
      coordinate_(std::move(coordinate)),
      groups_(std::move(groups)) {}

std::size_t DeviceMesh::index_of(const std::string& dim) const {
  const auto it = std::find(names_.begin(), names_.end(), dim);
  if (it != names_.end()) return static_cast<std::size_t>(it - names_.begin());
  std::string known;
  for (const auto& n : names_) known += (known.empty() ? "\"" : ", \"") + n + "\"";
  throw InvalidArgument("DeviceMesh: no dimension named \"" + dim + "\" (the mesh's are " + known +
                        ")");
}

std::size_t DeviceMesh::checked(int dim) const {
  if (dim < 0 || dim >= static_cast<int>(shape_.size()))
    throw InvalidArgument("DeviceMesh: dimension " + std::to_string(dim) +
                          " is out of range for a " + std::to_string(shape_.size()) +
                          "-dimensional mesh");
  return static_cast<std::size_t>(dim);
}

Group DeviceMesh::get_group(int dim) const { return groups_[checked(dim)]; }
int DeviceMesh::get_local_rank(int dim) const { return coordinate_[checked(dim)]; }
int DeviceMesh::size(int dim) const { return shape_[checked(dim)]; }
int DeviceMesh::size() const {
  return std::accumulate(shape_.begin(), shape_.end(), 1, std::multiplies<>());
}

DeviceMesh init_device_mesh(std::vector<int> shape, std::vector<std::string> dim_names) {
  const int world = get_world_size();
  if (shape.empty()) throw InvalidArgument("init_device_mesh: argument 'shape' is empty");
  long long product = 1;
  bool huge = false;  // the product passed 2^62: named as such rather than overflowing
  for (const int d : shape) {
    if (d < 1)
      throw InvalidArgument("init_device_mesh: shape " + shape_text(shape) +
                            " has a dimension < 1");
    huge = huge || product > (1LL << 62) / d;
    if (!huge) product *= d;
  }
  if (huge || product != world)
    throw InvalidArgument("init_device_mesh: shape " + shape_text(shape) + " holds " +
                          (huge ? "more than 2^62" : std::to_string(product)) +
                          " ranks, but the world has " + std::to_string(world));
  if (dim_names.empty())
    for (std::size_t d = 0; d < shape.size(); ++d) dim_names.push_back("dim" + std::to_string(d));
  if (dim_names.size() != shape.size())
    throw InvalidArgument("init_device_mesh: " + std::to_string(dim_names.size()) +
                          " dim_names for a " + std::to_string(shape.size()) +
                          "-dimensional shape");
  for (std::size_t d = 0; d < dim_names.size(); ++d)  // a few names: compared pairwise
    if (std::find(dim_names.begin(), dim_names.begin() + static_cast<std::ptrdiff_t>(d),
                  dim_names[d]) != dim_names.begin() + static_cast<std::ptrdiff_t>(d))
      throw InvalidArgument("init_device_mesh: dim_names repeat a name (\"" + dim_names[d] + "\")");
  // The caller's coordinate (row-major), and its line along each dimension: one split each.
  const int me = get_rank();
  std::vector<int> coordinate;
  std::vector<Group> mine;
  coordinate.reserve(shape.size());
  mine.reserve(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const auto layout = core::mesh_layout(shape, d, me);
    coordinate.push_back(layout.position);
    mine.push_back(core::make_layout_group(layout, "init_device_mesh"));
  }
  return DeviceMesh(std::move(shape), std::move(dim_names), std::move(coordinate), std::move(mine));
}

}  // namespace dist
