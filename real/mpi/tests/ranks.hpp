// The mpi tests' shorthands for this process's place in mpirun's world.
#pragma once

#include <chrono>

#include "dist/dist.hpp"
#include "dist/real/init.hpp"

namespace mpi_test {

inline int world() { return dist::get_world_size(); }
inline int rank() { return dist::get_rank(); }

// A mismatch ends the world (every later call raises the same DesyncError, as after any
// mismatch): tests that make one join a fresh world, on the same port, after it.
inline void fresh_world() {
  dist::destroy_dist();
  dist::InitOptions options;
  options.timeout = std::chrono::seconds(60);
  dist::init_dist("mpi", dist::Backend::mpi, options);
}

}  // namespace mpi_test
