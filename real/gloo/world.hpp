// The gloo backend's entry points for real/world.cpp: whether it was built, and the world
// backend of one rank. Without libgloo-dev both exist and say it was not built.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "real/world.hpp"

namespace dist::real {

bool gloo_built();
// Connects rank spec.rank of the gloo world (BackendError when dist was built without gloo).
std::shared_ptr<core::Backend> make_gloo_world(const WorldSpec& spec);

}  // namespace dist::real
