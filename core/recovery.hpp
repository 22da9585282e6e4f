// What the recovery calls share (core/fault_tolerance.cpp: abort and shrink_group;
// core/reconfigure.cpp: reconfigure): a rank's groups, and marking them aborted.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "dist/api.hpp"
#include "dist/export.hpp"

namespace dist::core {

// The state of `group` on this rank (the default group: the world), aborted or not; refuses a
// destroyed group or another rank's.
DIST_API std::shared_ptr<detail::GroupState> group_state(Context& ctx, const Group& group,
                                                         const std::string& function);
// Every group of the rank, each once: the world, its node group, the object group and every
// group made since.
DIST_API std::vector<std::shared_ptr<detail::GroupState>> every_group(Context& ctx);
// Marks `targets` aborted on this rank and ends their pending calls (BackendImpl::abort): each
// later call raises Aborted saying "the <group> was aborted on rank R by <by> (<next>)". A
// backend that cannot refuses (InvalidArgument) before any group is marked; a group aborted
// already stays as it was.
DIST_API void abort_groups(
    Context& ctx, const std::vector<std::shared_ptr<detail::GroupState>>& targets,
    const std::string& by,
    const std::string& next = "make a group of the survivors with shrink_group");
// A replacement process's groups before it joins (ctx.restart_count set): every one is aborted,
// each later call saying to call dist::reconfigure() to join the job; its epoch is none yet.
DIST_API void abort_until_joined(Context& ctx);
// The restart count a launcher gave this process: TORCHELASTIC_RESTART_COUNT (torchrun's and
// distrun's), 0 when unset; InvalidArgument naming it when it is not a count.
DIST_API int launcher_restart_count();

}  // namespace dist::core
