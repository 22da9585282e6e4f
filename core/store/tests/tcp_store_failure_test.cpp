// A TCP store client whose server stops answering or goes away (issue 38): once a reconnection
// found no answer, the next requests fail at once, with the same kind of error, for a backoff; a
// request never waits for another thread's past its own deadline; a reconnection refused is final;
// and a fresh connection tells a frozen server's host (accepting) from one whose server is gone
// (refused). The "frozen" server is a socket that answers its first connection's hello and
// nothing after.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/store/tcp_store.hpp"
#include "core/store/tests/store_options.hpp"
#include "dist/errors.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using dist::core::TcpStore;

// Listens on 127.0.0.1; the first connection's hello is answered "ok", and nothing after it.
class FrozenServer {
 public:
  FrozenServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listener_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::jthread([this](std::stop_token stop) { serve(stop); });
  }
  ~FrozenServer() { close(); }

  std::uint16_t port() const { return port_; }

  // The server's process is gone: its port refuses, its connections close.
  void close() {
    if (thread_.joinable()) {
      thread_.request_stop();
      ::shutdown(listener_, SHUT_RDWR);
      thread_.join();
    }
    for (const int fd : connections_) ::close(fd);
    connections_.clear();
    if (listener_ >= 0) ::close(listener_);
    listener_ = -1;
  }

 private:
  void serve(const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      connections_.push_back(fd);
      if (connections_.size() > 1) continue;  // frozen: accepted by the kernel, never answered
      char header[4];
      if (::recv(fd, header, 4, MSG_WAITALL) != 4) continue;
      std::uint32_t length = 0;
      for (int i = 3; i >= 0; --i) length = length << 8 | static_cast<unsigned char>(header[i]);
      std::vector<char> hello(length);
      if (::recv(fd, hello.data(), length, MSG_WAITALL) != static_cast<ssize_t>(length)) continue;
      const char ok[5] = {1, 0, 0, 0, 0};  // a frame of one byte: Status::ok
      ::send(fd, ok, sizeof ok, MSG_NOSIGNAL);
    }
  }

  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::vector<int> connections_;
  std::jthread thread_;
};

template <class F>
Clock::duration timed(F&& f) {
  const auto start = Clock::now();
  f();
  return Clock::now() - start;
}

TEST(TcpStoreFailure, AfterAReconnectionFoundNoAnswerTheNextFailAtOnce) {
  FrozenServer server;
  TcpStore client(store_test::options(false, server.port(), 10s));
  EXPECT_THROW(client.set("a", dist::core::to_bytes("1"), 300ms), dist::TimeoutError);
  // A slow reply alone starts no backoff; the reconnection that finds no answer does.
  EXPECT_THROW(client.set("a", dist::core::to_bytes("1"), 300ms), dist::TimeoutError);
  const auto took = timed([&] {
    try {
      client.get("a", 5s);
      ADD_FAILURE() << "a frozen store answered";
    } catch (const dist::TimeoutError& e) {  // the same kind as the failure it repeats
      EXPECT_NE(std::string(e.what()).find("was not sent: the store failed"), std::string::npos)
          << e.what();
    }
  });
  EXPECT_LT(took, 100ms);
}

TEST(TcpStoreFailure, ARequestNeverWaitsForAnotherThreadsPastItsDeadline) {
  FrozenServer server;
  TcpStore client(store_test::options(false, server.port(), 10s));
  const auto set_within = [&](const char* key, std::chrono::milliseconds budget) {
    client.set(key, dist::core::to_bytes("1"), budget);
  };
  std::jthread slow([&] { EXPECT_THROW(set_within("a", 2s), dist::TimeoutError); });
  std::this_thread::sleep_for(100ms);  // the slow request holds the connection
  const auto took = timed([&] { EXPECT_THROW(set_within("b", 300ms), dist::TimeoutError); });
  EXPECT_LT(took, 1s);
}

TEST(TcpStoreFailure, AFreshConnectionTellsAFrozenServerFromAGoneOne) {
  using Reach = dist::Store::HostReach;
  FrozenServer server;
  TcpStore client(store_test::options(false, server.port(), 10s));
  EXPECT_EQ(client.reach_host(500ms), Reach::accepting);
  server.close();
  EXPECT_EQ(client.reach_host(500ms), Reach::refused);
  // The connection is gone and a reconnection is refused: final, at once, saying so.
  EXPECT_THROW(client.set("a", dist::core::to_bytes("1"), 5s), dist::BackendError);
  std::this_thread::sleep_for(600ms);  // past the backoff: this one reconnects, and is refused
  const auto took = timed([&] {
    try {
      client.set("a", dist::core::to_bytes("1"), 5s);
      ADD_FAILURE() << "a gone store answered";
    } catch (const dist::BackendError& e) {
      EXPECT_NE(std::string(e.what()).find("has exited"), std::string::npos) << e.what();
    }
  });
  EXPECT_LT(took, 500ms);
  EXPECT_EQ(TcpStore(store_test::options(true, 0)).reach_host(100ms), Reach::unknown);
}

}  // namespace
