// Bringing a gloo group up: the TCP device a rank's groups share (its address from
// bind_address.hpp), the adapter from our Store to gloo's, and the rendezvous of a group.
#pragma once

#include <memory>
#include <string>

#include "real/gloo/backend.hpp"

namespace dist::real {

// The TCP device of a rank, listening where choose_bind_address says (bind_address.hpp).
std::shared_ptr<::gloo::transport::Device> make_gloo_device(const std::string& rendezvous_host);

// Rendezvous of spec's members through spec.store under spec.prefix: waits for every member
// (TimeoutError naming the ranks that never came), connects the full mesh, registers each peer's
// address with `errors`, and returns the connected context.
std::shared_ptr<::gloo::Context> connect_group(const GlooGroupSpec& spec, ErrorMapper& errors);

}  // namespace dist::real
