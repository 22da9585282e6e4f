// A raw TCP connection to a store's port for the robustness tests (arbitrary bytes, half-sent
// messages, idle connections), and helpers that build frames and hellos by hand.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace store_test {

using Clock = std::chrono::steady_clock;

// Connects socket `fd` to `port` on the loopback address; whether it connected.
inline bool connect_loopback(int fd, std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

// A raw connection for sending arbitrary bytes to the store's port.
class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port)
      : fd_(::socket(AF_INET, SOCK_STREAM, 0)), connected_(connect_loopback(fd_, port)) {}
  ~RawSocket() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }
  void send(const std::string& bytes) { send(bytes.data(), bytes.size()); }
  void send(const char* data, std::size_t size) { (void)!::send(fd_, data, size, MSG_NOSIGNAL); }
  // Whether the server closed the connection within `timeout` (reads until EOF or error).
  bool closed_by_server(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[256];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return true;
    }
    return false;
  }
  // The payload of the next frame the server sends ("" when none arrives within `timeout`).
  std::string read_frame(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    std::string got;
    std::size_t want = 4;
    while (got.size() < want && Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, std::min(sizeof buf, want - got.size()), 0);
      if (n <= 0) return "";
      got.append(buf, static_cast<std::size_t>(n));
      if (want == 4 && got.size() == 4) {
        std::uint32_t length = 0;
        for (int i = 3; i >= 0; --i)
          length = length << 8 | static_cast<unsigned char>(got[static_cast<std::size_t>(i)]);
        want += length;
      }
    }
    return got.size() == want && want > 4 ? got.substr(4) : "";
  }

 private:
  int fd_;
  bool connected_ = false;
};

inline std::string frame(std::uint32_t length, const std::string& payload) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xFF);
  return out + payload;
}

inline std::string u32_text(std::uint32_t n) {
  std::string out;
  for (int i = 0; i < 4; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out;
}

// A hello with `secret` (empty: none) claiming `rank` (-1: none), as a connection's first request.
inline std::string hello(const std::string& secret = "", std::int32_t rank = -1) {
  const std::string payload = "\x07" + u32_text(static_cast<std::uint32_t>(rank)) + "\x01" +
                              u32_text(static_cast<std::uint32_t>(secret.size())) + secret;
  return frame(static_cast<std::uint32_t>(payload.size()), payload);
}

// A wait request for one key, with a timeout in milliseconds.
inline std::string wait_request(const std::string& key, std::uint64_t timeout_ms) {
  std::string payload = "\x05";
  for (int i = 0; i < 8; ++i) payload += static_cast<char>((timeout_ms >> (8 * i)) & 0xFF);
  payload += u32_text(1) + u32_text(static_cast<std::uint32_t>(key.size())) + key;
  return frame(static_cast<std::uint32_t>(payload.size()), payload);
}

}  // namespace store_test
