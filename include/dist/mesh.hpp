// Layouts of subgroups, as parallel training code makes them: new_subgroups (equal consecutive
// groups, or an explicit list) and a device mesh (torch's init_device_mesh), whose every dimension
// gives each rank the group of the ranks that differ from it in that coordinate only.
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dist/api.hpp"
#include "dist/export.hpp"

namespace dist {

namespace detail {
struct SubgroupsState;  // core/subgroups.cpp
}

// Every group of a layout, as new_subgroups returns them: the caller's own group, and the others
// (groups it is not a member of: their ranks, no backend) made when asked for, from the layout's
// rule. A rank holds O(1) of them whatever the world (no rank holds a list of every subgroup);
// to_vector() makes them all.
class DIST_API Subgroups {
 public:
  class iterator {
   public:
    using value_type = Group;
    using difference_type = std::ptrdiff_t;
    using iterator_category = std::input_iterator_tag;
    iterator() = default;
    iterator(const Subgroups* list, std::size_t i) : list_(list), i_(i) {}
    Group operator*() const { return (*list_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++i_;
      return before;
    }
    bool operator==(const iterator& other) const { return i_ == other.i_; }

   private:
    const Subgroups* list_ = nullptr;
    std::size_t i_ = 0;
  };

  Subgroups() = default;
  explicit Subgroups(std::shared_ptr<const detail::SubgroupsState> state);

  std::size_t size() const;
  bool empty() const { return size() == 0; }
  // Group i of the layout (i < size(); InvalidArgument otherwise).
  Group operator[](std::size_t i) const;
  Group at(std::size_t i) const { return (*this)[i]; }
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }
  std::vector<Group> to_vector() const;
  operator std::vector<Group>() const { return to_vector(); }  // NOLINT: a list of groups, as before

 private:
  std::shared_ptr<const detail::SubgroupsState> state_;
};

// Splits the world into groups of `group_size` consecutive ranks (0: the local size, so one group
// per node). Returns the caller's group and all of them, in order. Every rank calls it.
// InvalidArgument when group_size does not divide the world size, or is negative.
DIST_API std::pair<Group, Subgroups> new_subgroups(int group_size = 0);
// The groups listed (each a list of global ranks; a rank in at most one). Returns the caller's
// group (a Group it is not a member of, the first one, when no list holds it) and all of them.
DIST_API std::pair<Group, Subgroups> new_subgroups_by_enumeration(
    const std::vector<std::vector<int>>& ranks_per_subgroup);

// A mesh of the world's ranks in row-major order: with shape {2, 4}, rank 6 has coordinate
// {1, 2}, its group of dimension 0 is {2, 6} and of dimension 1 is {4, 5, 6, 7}.
class DIST_API DeviceMesh {
 public:
  DeviceMesh(std::vector<int> shape, std::vector<std::string> dim_names,
             std::vector<int> coordinate, std::vector<Group> groups);

  const std::vector<int>& shape() const { return shape_; }
  const std::vector<std::string>& dim_names() const { return names_; }
  // The caller's position in the mesh, one index per dimension.
  std::vector<int> coordinate() const { return coordinate_; }
  // The caller's group along a dimension (by name, or index).
  Group get_group(const std::string& dim) const { return groups_[index_of(dim)]; }
  Group get_group(int dim) const;
  // The caller's rank in that group: its coordinate along the dimension.
  int get_local_rank(const std::string& dim) const { return coordinate_[index_of(dim)]; }
  int get_local_rank(int dim) const;
  int size(const std::string& dim) const { return shape_[index_of(dim)]; }
  int size(int dim) const;
  // The number of ranks in the mesh.
  int size() const;

 private:
  std::size_t index_of(const std::string& dim) const;
  std::size_t checked(int dim) const;

  std::vector<int> shape_;
  std::vector<std::string> names_;
  std::vector<int> coordinate_;
  std::vector<Group> groups_;
};

// Lays the world's ranks out as a mesh of `shape` (its product must be the world size; each
// dimension >= 1), with `dim_names` (empty: "dim0", "dim1", ...; else one distinct name per
// dimension). Every rank calls it; it makes the groups of every dimension. InvalidArgument for a
// wrong size, which names both, and for bad names.
DIST_API DeviceMesh init_device_mesh(std::vector<int> shape,
                                     std::vector<std::string> dim_names = {});

}  // namespace dist
