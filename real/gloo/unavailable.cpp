// Built instead of the gloo backend when libgloo-dev was not found: the gloo row of the registry
// says why, and connecting raises BackendError with it.
#include "real/registry.hpp"

namespace dist::real {

extern const BackendEntry gloo_entry;
constinit const BackendEntry gloo_entry = unbuilt_entry<dist::Backend::gloo>([](int) {
  return std::string(
      "dist was built without gloo (libgloo-dev was not found at configure time); install "
      "libgloo-dev and reconfigure, or use another backend");
});

}  // namespace dist::real
