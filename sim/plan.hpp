// Turns a matched Op into a Plan: its data movement cut into chunks that any waiting rank can
// execute, reading peers' buffers in place (zero-copy) and reducing in rank order.
#pragma once

#include "sim/op.hpp"

namespace dist::sim {

// The address of element `element` of a call's input or output buffer.
inline const std::byte* in_at(const Call& c, std::size_t element) {
  return static_cast<const std::byte*>(c.in) + element * dtype_size(c.dtype);
}
inline std::byte* out_at(const Call& c, std::size_t element) {
  return static_cast<std::byte*>(c.out) + element * dtype_size(c.dtype);
}

// The plan of a matched op whose calls agree (same kind, dtype, count, root and op).
Plan make_plan(const Op& op);
// The plan of an op that only moves data (copy_plan.cpp).
Plan copy_plan(const Op& op);

}  // namespace dist::sim
