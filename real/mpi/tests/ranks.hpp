// The mpi tests' shorthands for this process's place in mpirun's world.
#pragma once

#include "dist/dist.hpp"

namespace mpi_test {

inline int world() { return dist::get_world_size(); }
inline int rank() { return dist::get_rank(); }

}  // namespace mpi_test
