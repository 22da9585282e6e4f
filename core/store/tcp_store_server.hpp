// The TcpStore server: an asio acceptor on host:port served by one background thread. It holds
// the key-value map, answers requests, and parks `wait` requests until their keys are set or
// their timeout passes. A malformed or oversized message closes only that connection; a key list
// longer than max_keys is answered with an error naming the limit.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/store/tcp_protocol.hpp"

namespace dist::core {

// What the server bounds and whom it serves (see TcpStoreOptions for each field).
struct TcpStoreServerOptions {
  std::size_t max_message = tcp_store::default_max_message;
  std::size_t max_value = tcp_store::default_max_value;
  std::size_t max_total = tcp_store::default_max_total;
  std::size_t max_keys = tcp_store::default_max_keys;
  std::chrono::milliseconds idle_timeout = tcp_store::default_idle_timeout;
  std::string secret;  // empty: any client is served
  int world_size = 0;  // ranks a hello may claim are 0..world_size-1 (0: any rank)
  // Its world's number in its process (TcpStoreOptions::generation; 0: any): a hello from a later
  // world is told to wait (Status::later), one from an earlier world is refused.
  std::uint32_t generation = 0;
  // Keys under this prefix (the call layer's records and diagnosis: "calls/") may be written
  // only by connections that claimed a rank, so a stranger's words never become a rank's error.
  // Empty: anyone may write any key (a store whose clients claim no ranks).
  std::string members_only_prefix = "";
};

class TcpStoreServer {
 public:
  // Listens on host:port (port 0: a free port, reported by port()). BackendError when the port is
  // already in use or the host does not resolve to a local address.
  TcpStoreServer(const std::string& host, std::uint16_t port, TcpStoreServerOptions options = {});
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  std::uint16_t port() const;
  // How many connections were closed for a malformed or oversized message (for tests and logs).
  std::size_t rejected_connections() const;
  // How many ranks are claimed by open connections (the server remembers no other claims).
  std::size_t claimed_ranks() const;
  // How many store objects have connected so far (first connections whose hello was accepted;
  // reconnections do not count).
  std::size_t joined_clients() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace dist::core
