// A sim rank's context (core::Context): made for the run, made anew for a Fault::restart's
// replacement, and the check that a replacement joined the job.
#pragma once

#include <memory>

#include "core/context.hpp"
#include "sim/world.hpp"

namespace dist::sim {

// `rank`'s context: its world and node groups over the World's communicators, its random stream
// (from the cluster's seed), how it makes groups (new_group's options) and reconfigure's agreement.
std::unique_ptr<core::Context> make_context(World& world, int rank);
// A Fault::restart's replacement: the killed process's context, made anew (the same object, as
// the run's registry knows it), with its restart count; its world and node groups are the killed
// process's and stay aborted until dist::reconfigure gives it the job's group.
void replace_process(World& world, core::Context* ctx, int rank, int restart_count);
// InvalidArgument when the context is a replacement's that never called dist::reconfigure.
void check_joined(const core::Context& ctx);

}  // namespace dist::sim
