// The seam between the front end and the real backends: a WorldSpec (who this rank is, the
// store the ranks meet through) becomes a connected core::Context for the chosen backend.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/context.hpp"
#include "core/store/store.hpp"
#include "dist/types.hpp"

namespace dist::real {

struct WorldSpec {
  dist::Backend backend = dist::Backend::gloo;
  std::shared_ptr<core::Store> store;
  int rank = 0;
  int world_size = 1;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  std::string host;  // the rendezvous host (picks the network the backend uses); "" = loopback
};

// Connects this rank's world backend (collective over every rank of the spec) and returns its
// context, not yet installed. BackendError when the backend was not built.
std::shared_ptr<core::Context> make_world_context(const WorldSpec& spec);

}  // namespace dist::real
