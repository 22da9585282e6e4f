// TCP ports for tests that open listening sockets (stores, rendezvous, launchers, daemons).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "core/store/port_reservation.hpp"

namespace test_support {

// A TCP port on 127.0.0.1 that this process holds for the rest of its life
// (dist::core::PortReservation): no other test's bind to port 0 (Gloo's listeners, distrun's
// port) and no outgoing connection takes it meanwhile, while a listener that sets SO_REUSEADDR
// (dist's stores, slurmctld) binds it. ctest runs tests in parallel, so a port merely free a
// moment ago could be another test's by the time it is used.
inline std::uint16_t free_port() {
  static std::mutex mutex;
  static std::vector<dist::core::PortReservation> held;
  auto reservation = dist::core::PortReservation::on("127.0.0.1");
  const auto port = static_cast<std::uint16_t>(reservation.port());
  const std::lock_guard lock(mutex);
  held.push_back(std::move(reservation));
  return port;
}

}  // namespace test_support
