// The mpi backend's world: MPI initialised (or found initialised) and the world group on its own
// communicator. entry.cpp makes it the mpi row of the registry.
#pragma once

#include <memory>

#include "core/backend_impl.hpp"
#include "real/world.hpp"

namespace dist::real {

// Joins MPI_COMM_WORLD as rank spec.rank (MPI is initialised here unless the program did it).
// BackendError when MPI's rank and size are not the launcher's (not started by mpirun).
std::shared_ptr<core::BackendImpl> make_mpi_world(const WorldSpec& spec);

}  // namespace dist::real
