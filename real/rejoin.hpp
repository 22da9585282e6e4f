// dist::reconfigure where the ranks are processes (gloo, nccl): the context's rejoin (the store
// agreement of core/store/membership.hpp, then the agreed members connect a group under the
// epoch's store prefix), and the world of a replacement process, which joins no world rendezvous:
// the others connected theirs long ago, so it waits for the next agreement instead.
#pragma once

#include <memory>

#include "core/backend_impl.hpp"
#include "core/context.hpp"
#include "real/world.hpp"

namespace dist::real {

// Whether this process replaces a lost one of a running job: its restart count is above 0, its
// backend can let a replacement in (the registry row's `rejoins`), and a process of its rank had
// joined the job's store before (mark_joined). A launcher that restarts every process (torchrun)
// starts a new store, where no rank has joined yet: those processes make a new world as usual.
bool is_replacement(const WorldSpec& spec);
// Records in the job's store that this rank joined the world (after its world connected).
void mark_joined(const WorldSpec& spec);

// The world backend of a replacement (spec.restart_count > 0) before it joins: the world's rank
// and size, and every call refused (its groups are aborted: abort_until_joined).
std::shared_ptr<core::BackendImpl> unjoined_world(const WorldSpec& spec);

// Gives `ctx` (made from `spec`, its world under the call layer) the rejoin of dist::reconfigure,
// when spec's backend rejoins.
void enable_rejoin(core::Context& ctx, const WorldSpec& spec);

}  // namespace dist::real
