// Turns a matched Op into a Plan: its data movement cut into chunks that any waiting rank can
// execute, reading peers' buffers in place (zero-copy) and reducing in rank order.
#pragma once

#include "sim/op.hpp"

namespace dist::sim {

// The plan of a matched op whose calls agree (same kind, dtype, count, root and op).
Plan make_plan(const Op& op);

}  // namespace dist::sim
