// Built instead of the mpi backend when no MPI library was found: the mpi row of the registry says
// why, and connecting raises BackendError with it.
#include "real/registry.hpp"

namespace dist::real {

extern const BackendEntry mpi_entry;
constinit const BackendEntry mpi_entry = unbuilt_entry<dist::Backend::mpi>([](int) {
  return std::string(
      "dist was built without mpi (no MPI library was found at configure time); install "
      "libopenmpi-dev and reconfigure, or use another backend");
});

}  // namespace dist::real
