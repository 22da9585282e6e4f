// choose_bind_address: the rendezvous host resolved here (so gloo never resolves a name), then
// the kernel's source address for a route to it, read from an unsent UDP socket's connect().
#include "real/gloo/bind_address.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dist/errors.hpp"

namespace dist::real {

namespace {

std::string numeric(const sockaddr* address, socklen_t length) {
  char host[NI_MAXHOST] = {};
  if (::getnameinfo(address, length, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
    return "?";
  return host;
}

struct Resolved {
  std::vector<sockaddr_storage> addresses;
  std::vector<socklen_t> lengths;
  std::string text;  // "198.18.0.1, ::1"
};

Resolved resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0)
    throw BackendError("gloo: the rendezvous host '" + host +
                       "' (MASTER_ADDR) does not resolve on " + "this host: " + ::gai_strerror(rc) +
                       " (give MASTER_ADDR as an address, or add the name to /etc/hosts; "
                       "GLOO_SOCKET_IFNAME=<interface> picks the interface gloo listens on)");
  Resolved out;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family != AF_INET && a->ai_family != AF_INET6) continue;
    sockaddr_storage copy{};
    std::memcpy(&copy, a->ai_addr, a->ai_addrlen);
    out.addresses.push_back(copy);
    out.lengths.push_back(a->ai_addrlen);
    out.text += (out.text.empty() ? "" : ", ") + numeric(a->ai_addr, a->ai_addrlen);
  }
  ::freeaddrinfo(found);
  if (out.addresses.empty())
    throw BackendError("gloo: the rendezvous host '" + host +
                       "' (MASTER_ADDR) resolves to no IPv4 or IPv6 address");
  return out;
}

// The source address of this host's route to `target`, or "" with `error` set.
std::string source_toward(const sockaddr_storage& target, socklen_t length, int& error) {
  const int fd = ::socket(target.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = errno;
    return "";
  }
  sockaddr_storage with_port = target;  // connect() needs a port, though nothing is sent
  if (with_port.ss_family == AF_INET) reinterpret_cast<sockaddr_in&>(with_port).sin_port = htons(9);
  else reinterpret_cast<sockaddr_in6&>(with_port).sin6_port = htons(9);
  std::string source;
  sockaddr_storage self{};
  socklen_t self_length = sizeof self;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&with_port), length) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &self_length) != 0)
    error = errno;
  else source = numeric(reinterpret_cast<const sockaddr*>(&self), self_length);
  ::close(fd);
  return source;
}

}  // namespace

bool is_loopback_address(const std::string& address) {
  return address.rfind("127.", 0) == 0 || address == "::1" || address.rfind("::ffff:127.", 0) == 0;
}

BindChoice choose_bind_address(const std::string& rendezvous_host) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
    return {ifname, "", std::string("GLOO_SOCKET_IFNAME=") + ifname};
  if (rendezvous_host.empty() || rendezvous_host == "localhost")
    return {"", "127.0.0.1", "loopback (the rendezvous is on this host)"};
  const Resolved resolved = resolve(rendezvous_host);
  for (std::size_t i = 0; i < resolved.addresses.size(); ++i) {
    const auto& a = resolved.addresses[i];
    const std::string text = numeric(reinterpret_cast<const sockaddr*>(&a), resolved.lengths[i]);
    if (is_loopback_address(text))  // every rank is on this host: stay on loopback
      return {"", a.ss_family == AF_INET6 ? "::1" : "127.0.0.1",
              "loopback (the rendezvous host '" + rendezvous_host + "' is " + text + ")"};
  }
  int error = 0;
  for (std::size_t i = 0; i < resolved.addresses.size(); ++i) {
    const std::string source = source_toward(resolved.addresses[i], resolved.lengths[i], error);
    if (!source.empty())
      return {"", source,
              source + ", the address this host reaches the rendezvous host '" + rendezvous_host +
                  "' (" + resolved.text + ") from"};
  }
  throw BackendError("gloo: this host has no route to the rendezvous host '" + rendezvous_host +
                     "' (MASTER_ADDR, resolved to " + resolved.text + "): " + std::strerror(error) +
                     " (check the address, or set GLOO_SOCKET_IFNAME to the interface to use)");
}

}  // namespace dist::real
