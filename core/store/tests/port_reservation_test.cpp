// PortReservation: a held port is refused to every other bind that does not share it (which is
// what keeps the kernel from handing it to a bind to port 0 or an outgoing connection), a store
// still listens on it, and it is free again once released.
#include "core/store/port_reservation.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/store/tcp_store.hpp"
#include "core/store/tests/store_options.hpp"

namespace {

using namespace std::chrono_literals;
using dist::core::PortReservation;

// 0, or the errno of binding 127.0.0.1:port without SO_REUSEADDR, as a bind to port 0 would.
int plain_bind_errno(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

TEST(PortReservation, HoldsThePortUntilReleased) {
  std::optional<PortReservation> held(PortReservation::on("127.0.0.1"));
  const int port = held->port();
  ASSERT_GT(port, 0);
  EXPECT_EQ(plain_bind_errno(port), EADDRINUSE);
  held.reset();
  EXPECT_EQ(plain_bind_errno(port), 0);
}

TEST(PortReservation, AStoreListensOnAHeldPort) {
  const PortReservation held = PortReservation::on("127.0.0.1");
  const auto port = static_cast<std::uint16_t>(held.port());
  dist::core::TcpStore server(store_test::options(true, port));
  dist::core::TcpStore client(store_test::options(false, port, 5s));
  client.set("k", dist::core::to_bytes("v"));
  EXPECT_EQ(server.get("k", 5s), dist::core::to_bytes("v"));
}

TEST(PortReservation, MovingKeepsOneHolder) {
  PortReservation first = PortReservation::on("127.0.0.1");
  const int port = first.port();
  PortReservation second = std::move(first);
  EXPECT_EQ(second.port(), port);
  EXPECT_EQ(plain_bind_errno(port), EADDRINUSE);
}

TEST(PortReservation, AHostThatDoesNotResolveIsNamed) {
  try {
    (void)PortReservation::on("no-such-host.invalid");
    FAIL() << "reserved a port on a host that does not resolve";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'no-such-host.invalid'"), std::string::npos) << e.what();
  }
}

}  // namespace
