// A TCP port held for a store that will listen on it later (a launcher picks MASTER_PORT, a rank
// binds it after a fork or an exec). Binding port 0 and releasing it leaves a window in which
// another process's bind to port 0 (Gloo's pair listeners) or its outgoing connection takes the
// port: the store then fails with "already in use", or worse, its clients talk to a stranger.
// A reservation keeps the port bound, with SO_REUSEADDR and not listening: the kernel hands it
// to no other bind to port 0 and to no outgoing connection, and the store's own bind (which sets
// SO_REUSEADDR, as TcpStoreServer does) still succeeds. Header-only, so that distrun, spawn and
// the tests share it without linking dist_core.
#pragma once

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace dist::core {

class PortReservation {
 public:
  // A port on `host` (a name or an address; "127.0.0.1" for the loopback) that nothing else
  // holds, held until this object is destroyed. Throws std::runtime_error naming the host when
  // it does not resolve or no port can be bound on it.
  static PortReservation on(const std::string& host) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), "0", &hints, &found); rc != 0)
      throw std::runtime_error("cannot resolve '" + host +
                               "' to reserve a port: " + ::gai_strerror(rc));
    std::string why = "no address";
    PortReservation held;
    for (addrinfo* a = found; a != nullptr && held.fd_ < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      const int on = 1;
      sockaddr_storage bound{};
      socklen_t len = sizeof bound;
      char service[NI_MAXSERV] = {};
      if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0 &&
          ::bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0 &&
          ::getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, nullptr, 0, service,
                        sizeof service, NI_NUMERICSERV) == 0) {
        held.fd_ = fd;
        held.port_ = std::atoi(service);
      } else {
        why = std::strerror(errno);
        ::close(fd);
      }
    }
    ::freeaddrinfo(found);
    if (held.fd_ < 0) throw std::runtime_error("cannot bind a port on '" + host + "': " + why);
    return held;
  }

  PortReservation(PortReservation&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), port_(other.port_) {}
  PortReservation& operator=(PortReservation&& other) noexcept {
    std::swap(fd_, other.fd_);
    std::swap(port_, other.port_);
    return *this;
  }
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;
  ~PortReservation() {
    if (fd_ >= 0) ::close(fd_);
  }

  int port() const { return port_; }

 private:
  PortReservation() = default;
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace dist::core
