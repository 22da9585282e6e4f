// The gloo row of the registry: ranks as threads or processes, started by any launcher, no
// devices to pick and nothing to initialise per process.
#include "real/gloo/world.hpp"
#include "real/registry.hpp"

namespace dist::real {

extern const BackendEntry gloo_entry;
constinit const BackendEntry gloo_entry{.kind = dist::Backend::gloo,
                                        .threads = true,
                                        .launcher = "",
                                        .unavailable = [](int) { return std::string(); },
                                        .prepare = [](int) {},
                                        .make_world = make_gloo_world,
                                        .rejoins = true};

}  // namespace dist::real
