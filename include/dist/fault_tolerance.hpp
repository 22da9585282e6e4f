// Going on after a lost rank (torch's abort and shrink_group, NCCL's ncclCommAbort and
// ncclCommShrink): a rank abandons a group whose peer is gone, and the survivors make a group of
// themselves without the lost ranks' participation. docs/fault-tolerance.md tells the contract and
// what each backend does.
#pragma once

#include <chrono>
#include <initializer_list>
#include <optional>
#include <span>

#include "dist/api.hpp"
#include "dist/export.hpp"

namespace dist {

// Aborts `group` on this rank (the default group: the world, and with it every group made from
// it): every pending call of this rank on it ends at once, its Work raising dist::Aborted, and
// every later call on it raises Aborted naming the group. Never waits for a peer; a peer waiting
// in a call with this rank gets a RankFailure naming it. Aborting an aborted group does nothing.
// mpi (Open MPI 4.1, no ULFM) refuses it with InvalidArgument.
DIST_API void abort(const Group& group = {});
// Aborts every group of `groups` (the world among them: every group); none waits on another's
// call.
DIST_API void abort(std::span<const Group> groups);

// shrink_group's options: `abort_parent` aborts the group first (NCCL_SHRINK_ABORT: its pending
// calls end, as dist::abort does), for a group whose calls may still be waiting on a lost rank;
// `timeout` is the new group's (default: the parent's).
struct ShrinkOptions {
  bool abort_parent = false;
  std::optional<std::chrono::milliseconds> timeout = std::nullopt;
};

// The members of `group` but `excluded_ranks` (group ranks of `group`; the lost ones), as a new
// group, made by the survivors alone: only they call it, each with the same list, and the
// excluded ranks take no part (ncclCommShrink's contract). The new group's ranks keep the
// survivors' order (that of their global ranks in the world). InvalidArgument when the list
// excludes the caller, holds a rank out of range or twice, or leaves no rank.
DIST_API Group shrink_group(const Group& group, std::span<const int> excluded_ranks,
                            ShrinkOptions options = {});
// shrink_group(group, {2}): the list written in place.
inline Group shrink_group(const Group& group, std::initializer_list<int> excluded_ranks,
                          ShrinkOptions options = {}) {
  return shrink_group(group, std::span<const int>(excluded_ranks.begin(), excluded_ranks.size()),
                      options);
}

}  // namespace dist
