// Finding our connections' local ports from /proc/self/fd (getpeername/getsockname on each
// socket) and exchanging them through the store, so a peer can map them to our rank.
#include "real/gloo/peer_names.hpp"

#include <gloo/transport/tcp/address.h>
#include <netinet/in.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

namespace dist::real {

namespace {

bool same_endpoint(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    const auto& x = reinterpret_cast<const sockaddr_in&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in&>(b);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    const auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in6&>(b);
    return x.sin6_port == y.sin6_port && std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0;
  }
  return false;
}

}  // namespace

std::vector<std::string> local_ends_connected_to(const sockaddr_storage& listener) {
  std::vector<std::string> ends;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (...) {
      continue;
    }
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
    if (!same_endpoint(peer, listener)) continue;
    sockaddr_storage self{};
    len = sizeof self;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &len) != 0) continue;
    ends.push_back(::gloo::transport::tcp::Address(reinterpret_cast<const sockaddr*>(&self), len).str());
  }
  return ends;
}

void register_connected_peers(core::Store& store, int rank, const std::vector<int>& global_ranks,
                              const std::vector<sockaddr_storage>& listeners,
                              std::chrono::milliseconds timeout, ErrorMapper& errors) {
  const int size = static_cast<int>(global_ranks.size());
  std::ostringstream mine;  // lines "<peer rank> <local end>"
  for (int peer = 0; peer < size; ++peer)
    if (peer != rank)
      for (const auto& end : local_ends_connected_to(listeners[static_cast<std::size_t>(peer)]))
        mine << peer << ' ' << end << '\n';
  store.set("peers/" + std::to_string(rank), core::to_bytes(mine.str()));
  std::map<std::string, int> claims;  // end -> member claiming it (-2: claimed twice)
  for (int other = 0; other < size; ++other) {
    if (other == rank) continue;
    std::istringstream lines(core::to_string(store.get("peers/" + std::to_string(other), timeout)));
    int peer = -1;
    std::string end;
    while (lines >> peer >> end) {
      if (peer != rank) continue;
      const auto [it, inserted] = claims.emplace(end, other);
      if (!inserted && it->second != other) it->second = -2;
    }
  }
  for (const auto& [end, member] : claims)
    if (member >= 0) errors.add_peer(end, global_ranks[static_cast<std::size_t>(member)]);
}

}  // namespace dist::real
