// Built instead of the nccl backend when CUDA, NCCL or Thrust was not found at configure time:
// the nccl row of the registry says why (DIST_NCCL_MISSING, set by CMakeLists.txt).
#include "dist/errors.hpp"
#include "real/nccl/world.hpp"
#include "real/registry.hpp"

#ifndef DIST_NCCL_MISSING
#define DIST_NCCL_MISSING "CUDA/NCCL were not found at configure time"
#endif

namespace dist::real {

bool nccl_built() { return false; }

std::string nccl_unavailable_reason() {
  return std::string("dist was built without nccl: ") + DIST_NCCL_MISSING +
         " (install CUDA with NCCL and Thrust under /usr/local/cuda, or set DIST_CUDA_ROOT, and "
         "reconfigure)";
}

int nccl_device_count() { return 0; }

void require_nccl() { throw BackendError("init_process_group(nccl): " + nccl_unavailable_reason()); }

void select_nccl_device(int) {}

std::shared_ptr<core::BackendImpl> make_nccl_world(const WorldSpec&) {
  require_nccl();
  return nullptr;
}

extern const BackendEntry nccl_entry;
constinit const BackendEntry nccl_entry =
    unbuilt_entry<dist::Backend::nccl>([](int) { return nccl_unavailable_reason(); });

}  // namespace dist::real
