// The mpi backend's entry points for real/world.cpp: whether it was built, and the world backend
// of one rank. Without an MPI library (unavailable.cpp) both exist and say it was not built.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "real/world.hpp"

namespace dist::real {

bool mpi_built();
// Initialises MPI in this process unless it is already (MPI_Init is collective over mpirun's
// processes: a harness whose worlds use only some of them calls this on every process first).
// BackendError when dist was built without MPI.
void prepare_mpi();
// Joins MPI_COMM_WORLD as rank spec.rank (MPI is initialised here unless the program did it).
// BackendError when dist was built without MPI, or when MPI's rank and size are not the
// launcher's (the program was not started by mpirun).
std::shared_ptr<core::Backend> make_mpi_world(const WorldSpec& spec);

}  // namespace dist::real
