// A layout of groups as one rank sees it (new_subgroups, a device mesh's dimension): the split
// by color and key BackendImpl::split_groups makes, built by rule in O(the rank's own group), and
// the front end's groups made from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "dist/api.hpp"
#include "dist/export.hpp"
#include "dist/mesh.hpp"

namespace dist::core {

// Disjoint lists of a backend's ranks, the same on every rank, seen by one of them. Ranks that
// disagree on `hash` disagree on the layout (a DesyncError on 'groups').
struct Layout {
  std::uint32_t hash = 0;  // the layout's fingerprint, equal on every rank for the same layout
  std::size_t count = 0;   // the number of lists
  int color = -1;          // the index of this rank's list (-1: it is in none)
  int position = -1;       // this rank's index in its list (the split's key; -1: in none)
  // This rank's list has `size` ranks (0: in none). By rule (stride > 0) they are first,
  // first + stride, ...; explicit lists (stride 0) hold it as list(color). It is made only when
  // asked for (own()): a large world would otherwise hold a copy of its line on every rank, and
  // the sim's split and group share one copy per line instead.
  int size = 0;
  int first = 0;
  int stride = 0;
  // List i (0 <= i < count), made on demand: for a backend that needs every list (the default
  // split_groups); the others use only own() and `color`.
  std::function<std::vector<int>(std::size_t)> list;

  bool by_rule() const { return stride > 0; }
  // This rank's list (empty: in none).
  DIST_API std::vector<int> own() const;
  // Whether `ranks` is this rank's list, compared element by element without making it.
  DIST_API bool own_is(const std::vector<int>& ranks) const;
  // The same for a list made from this layout (a backend's split, a line an earlier member
  // brought): by rule, its length and ends only, since a list made from the same rule is the
  // whole progression and comparing it in full would read the whole line on each of its ranks;
  // explicit lists element by element.
  DIST_API bool own_is_from_this_layout(const std::vector<int>& ranks) const;
};

// A hash of explicit lists (new_subgroups_by_enumeration's fingerprint).
DIST_API std::uint32_t layout_hash(const std::vector<std::vector<int>>& lists);

// The lists of `length` ranks `stride` apart over ranks 0..world-1 (world a multiple of
// length × stride), ordered by their first rank: a row-major mesh's lines along a dimension.
DIST_API Layout strided_layout(int world, int length, int stride, int rank);
// Dimension `dim` of a row-major mesh of `shape` (its product the world): each rank's line holds
// the ranks that differ from it in coordinate `dim` only.
DIST_API Layout mesh_layout(std::span<const int> shape, std::size_t dim, int rank);
// `lists` as given; the layout shares them (its `list` reads them after the caller's are gone).
DIST_API Layout listed_layout(std::shared_ptr<const std::vector<std::vector<int>>> lists, int rank);

// The calling rank's group of `layout` (lists of world ranks), made by one split of the world
// (BackendImpl::split_groups); where the rank is in no list, a Group of list 0 it is not a member
// of. `function` names the caller in NotInitialized.
DIST_API Group make_layout_group(const Layout& layout, const char* function);
// All the layout's groups, in order: `mine` (make_layout_group's) at its color (at 0 when the
// rank is in no list), and the others made when asked for as groups the caller is not a member
// of (no backend, no communication). O(1) on the calling rank; `layout.list` must own what it
// reads.
DIST_API Subgroups layout_subgroups(const Layout& layout, const Group& mine);
// new_group's checks (non-empty, in range, no repeat) on each of `lists`, after
// make_layout_group's NotInitialized.
DIST_API void check_layout_lists(const std::vector<std::vector<int>>& lists, const char* function);

}  // namespace dist::core
