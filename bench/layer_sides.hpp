// The two sides of the call layer's cost pairs: the calling rank's world backend through its call
// layer (core/calls) and the same backend under it, as plain calls (the one bench file on core).
#pragma once

#include <functional>

#include "dist/detail/erased.hpp"

namespace dist::bench {

// One side: an all_reduce (sum) of `data` and a barrier, each waited for.
struct LayerSide {
  std::function<void(detail::BufferRef data)> all_reduce;
  std::function<void()> barrier;
};

struct LayerSides {
  LayerSide on;   // through the call layer
  LayerSide off;  // on the backend under it
};

// The calling rank's sides; throws std::runtime_error without a world or without a call layer.
LayerSides layer_sides();

}  // namespace dist::bench
