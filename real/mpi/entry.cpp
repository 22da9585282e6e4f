// The mpi row of the registry: one rank per process, every process started by mpirun (MPI_Init is
// collective over them, so preparing a process initialises MPI even where its rank sits out).
#include "real/mpi/runtime.hpp"
#include "real/mpi/world.hpp"
#include "real/registry.hpp"

namespace dist::real {

extern const BackendEntry mpi_entry;
constinit const BackendEntry mpi_entry{.kind = dist::Backend::mpi,
                                       .threads = false,
                                       .launcher = "mpi",
                                       .unavailable =
                                           [](int ranks) {
  return ranks <= 1 ? std::string()
                    : "the mpi backend runs one rank per process (start them with mpirun), not " +
                          std::to_string(ranks) + " in one";
                                       },
                                       .prepare = [](int) { ensure_mpi(); },
                                       .make_world = make_mpi_world};

}  // namespace dist::real
