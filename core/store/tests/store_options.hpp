// The TcpStoreOptions the store tests start from: 127.0.0.1, a server (port 0: any free port) or
// a client of `port`, and a timeout.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/store/tcp_store.hpp"

namespace store_test {

inline dist::core::TcpStoreOptions options(
    bool server, std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  dist::core::TcpStoreOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.is_server = server;
  o.timeout = timeout;
  return o;
}

}  // namespace store_test
