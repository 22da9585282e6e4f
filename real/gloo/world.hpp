// The gloo backend's world: one TCP device per rank, the world group under the store prefix
// "gloo/world". entry.cpp makes it the gloo row of the registry.
#pragma once

#include <memory>

#include "core/backend_impl.hpp"
#include "real/world.hpp"

namespace dist::real {

// Connects rank spec.rank of the gloo world over the host's network (spec.host picks it).
std::shared_ptr<core::BackendImpl> make_gloo_world(const WorldSpec& spec);

}  // namespace dist::real
