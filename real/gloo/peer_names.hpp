// Naming peers by the addresses gloo prints. Gloo's error messages name a peer by its side of the
// connection: the listening address it published when we connected to it, or an ephemeral port
// when it connected to us. This registers both kinds with the group's ErrorMapper.
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

#include "core/store/store.hpp"
#include "real/gloo/errors.hpp"

namespace dist::real {

// The local ends ("[ip]:port", gloo's format) of this process's TCP connections to `listener`.
std::vector<std::string> local_ends_connected_to(const sockaddr_storage& listener);

// After a group connected: publishes under `store` ("peers/<rank>") the local ends of our
// connections to each peer's listener, reads every member's list and registers the ends that
// connect to us (an end claimed by two ranks, as happens with ranks in one process, is skipped).
// `listeners[r]` is member r's listening address (ours is unused); `global_ranks` maps members.
void register_connected_peers(core::Store& store, int rank, const std::vector<int>& global_ranks,
                              const std::vector<sockaddr_storage>& listeners,
                              std::chrono::milliseconds timeout, ErrorMapper& errors);

}  // namespace dist::real
