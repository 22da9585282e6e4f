// torch's init methods turned into a store: env:// (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE),
// tcp://host:port (rank 0 hosts a TcpStore) and file:///path (a FileStore), or the caller's own
// store; plus the environment reading helpers init_dist's launchers share.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/store/store.hpp"

namespace dist::core {

struct Rendezvous {
  std::shared_ptr<Store> store;
  int rank = 0;
  int world_size = 1;
  std::string host;  // the rendezvous host (tcp/env); empty for a file store
};

// Where a launch's ranks meet and who this rank is, resolved from a launcher's environment.
struct RendezvousAddress {
  std::string host;
  std::uint16_t port = 0;
  int rank = -1;
  int world_size = -1;
};

// Opens the TCP store at `address` (rank 0 hosts it); `method` names the init method in errors.
DIST_API Rendezvous open_tcp_rendezvous(const RendezvousAddress& address,
                                        std::chrono::milliseconds timeout,
                                        const std::string& method);

// Parses `init_method` and opens its store (rank 0 starts the TCP server). rank / world_size of
// -1 are read from RANK / WORLD_SIZE (env://) or the URL query (?rank=0&world_size=2).
DIST_API Rendezvous open_rendezvous(const std::string& init_method, int rank, int world_size,
                                    std::chrono::milliseconds timeout);

// A store the caller opened (init_process_group with a store): the store (InvalidArgument when
// null), rank, world size and timeout checked; the host is a TCPStore's, under any PrefixStores
// ("" otherwise, as for file://: the backends then use loopback unless told otherwise).
DIST_API Rendezvous store_rendezvous(std::shared_ptr<Store> store, int rank, int world_size,
                                     std::chrono::milliseconds timeout);

// The port dist's store listens on for a job whose MASTER_PORT is `master_port`: that port, except
// under torchrun, whose agent holds it with a store of torch's own protocol
// (TORCHELASTIC_USE_AGENT_STORE=True): then DIST_STORE_PORT, else MASTER_PORT + 1 (the same on
// every node). InvalidArgument naming the variable when it is not a port.
std::uint16_t store_port(std::uint16_t master_port, const std::string& context);

// The environment variable `name`, or nothing when unset.
std::optional<std::string> get_env(const char* name);
// The variable's value; InvalidArgument naming it (and `context`) when unset.
std::string require_env(const char* name, const std::string& context);
// The variable parsed as an integer in [min, max]; InvalidArgument naming it otherwise.
long long require_env_int(const char* name, const std::string& context, long long min,
                          long long max);

}  // namespace dist::core
