// The collectives whose algorithm differs in Open MPI's non-blocking collectives (coll/libnbc,
// 4.1), called as dist's mpi backend calls them; Network::algorithms = open_mpi selects them
// (docs/prediction.md).
#pragma once

#include "core/calls/call.hpp"
#include "model/cost.hpp"
#include "model/terms.hpp"

namespace dist::sim::model {

// Whether Open MPI runs `kind` as a binomial tree of whole buffers (open_mpi_collective times it).
bool open_mpi_tree(core::CallKind kind);

// The time of `kind` (one open_mpi_tree accepts) moving `size` bytes (counted as collective()
// counts them) on the terms `t` of its group. The other kinds' volumes are the ring's, the
// exchange's or the chain's of NCCL's formulas.
Cost open_mpi_collective(const Terms& t, core::CallKind kind, double size);

}  // namespace dist::sim::model
