// make_gloo_world: one TCP device per rank, the world group under the store prefix "gloo/world".
#include "real/gloo/world.hpp"

#include "real/gloo/backend.hpp"
#include "real/gloo/connect.hpp"

namespace dist::real {

std::shared_ptr<core::BackendImpl> make_gloo_world(const WorldSpec& spec) {
  GlooGroupSpec group;
  group.store = spec.store;
  group.prefix = "gloo/world";
  group.device = make_gloo_device(spec.host);
  group.global_ranks = world_ranks_of(spec);
  group.rank = spec.rank;
  group.timeout = spec.timeout;
  return std::make_shared<GlooBackend>(std::move(group));
}

}  // namespace dist::real
