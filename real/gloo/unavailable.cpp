// Built instead of the gloo backend when libgloo-dev was not found: asking for gloo says why.
#include "dist/errors.hpp"
#include "real/gloo/world.hpp"

namespace dist::real {

bool gloo_built() { return false; }

std::shared_ptr<core::Backend> make_gloo_world(const WorldSpec&) {
  throw BackendError(
      "dist was built without gloo (libgloo-dev was not found at configure time); install "
      "libgloo-dev and reconfigure, or use another backend");
}

}  // namespace dist::real
