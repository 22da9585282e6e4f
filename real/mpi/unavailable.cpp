// Built instead of the mpi backend when no MPI library was found: asking for mpi says why.
#include "dist/errors.hpp"
#include "real/mpi/world.hpp"

namespace dist::real {

bool mpi_built() { return false; }

void prepare_mpi() {
  throw BackendError(
      "dist was built without mpi (no MPI library was found at configure time); install "
      "libopenmpi-dev and reconfigure, or use another backend");
}

std::shared_ptr<core::Backend> make_mpi_world(const WorldSpec&) {
  prepare_mpi();
  return nullptr;
}

}  // namespace dist::real
