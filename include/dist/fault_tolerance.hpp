// Going on after a lost rank (torch's abort and shrink_group, NCCL's ncclCommAbort and
// ncclCommShrink): a rank abandons a group whose peer is gone, and the survivors make a group of
// themselves without the lost ranks' participation, and an elastic job agrees on a new membership
// that lets a restarted rank back in (torch's reconfigure). docs/fault-tolerance.md tells the
// contract and what each backend does.
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

// reconfigure's options: `timeout` bounds the wait for the membership's agreement (default: the
// world's timeout); a member that has not come by then fails every caller with TimeoutError.
struct ReconfigureOptions {
  std::optional<std::chrono::milliseconds> timeout = std::nullopt;
};

// The elastic step. Every live member of `group` (the world, or the last group reconfigure gave
// this rank) and every restarted process waiting to join (dist::restart_count() > 0, passing the
// world) calls it; they agree on one membership: the callers, which are every member still
// running (members that died or returned are left out) and every newcomer that has called. The
// membership has an epoch, counted from 0 (the world) up by one per change. When it changed,
// every group of this rank is aborted (their later calls raise Aborted) and each caller gets the
// same new group, numbered in the order of global ranks (Group::ranks() lists them); when it did
// not, each gets the group it has. A member that never calls holds the others until `timeout`
// (sim: a DeadlockError at once where it provably never will). InvalidArgument for a group that
// is neither the world nor this rank's latest reconfigured group; mpi refuses it (no ULFM).
DIST_API Group reconfigure(const Group& group = {}, ReconfigureOptions options = {});

// How many times this rank's process was restarted to replace a lost one: 0 for the first
// (sim: a Fault::restart's replacement counts 1, 2, ...; a launcher's restarts set
// TORCHELASTIC_RESTART_COUNT, as torchrun does). A process with a count above 0 joins the job
// with dist::reconfigure() before any other call.
DIST_API int restart_count();

}  // namespace dist
