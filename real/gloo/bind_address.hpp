// Which local address a gloo rank listens on, chosen as NCCL and torch do: GLOO_SOCKET_IFNAME when
// set, loopback for a loopback (or no) rendezvous host, else the source address of this host's
// route to the rendezvous host (what its store connection leaves from). Never a name gloo must
// resolve itself, and never loopback for a remote rendezvous host.
#pragma once

#include <string>

namespace dist::real {

struct BindChoice {
  std::string iface;    // an interface to bind (GLOO_SOCKET_IFNAME), or empty
  std::string address;  // else a numeric address ("198.18.0.1", "::1")
  std::string why;      // how it was chosen, for errors ("the address this host reaches ... from")
};

// The choice for a rank whose rendezvous host is `rendezvous_host` (MASTER_ADDR, the tcp:// host,
// a TCPStore's host; "" for a file store). BackendError, naming the host, what it resolved to and
// the fix, when the host does not resolve or this host has no route to it.
BindChoice choose_bind_address(const std::string& rendezvous_host);

// Whether `address` (numeric) is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x).
bool is_loopback_address(const std::string& address);

}  // namespace dist::real
