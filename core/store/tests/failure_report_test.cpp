// Failure reports through a TCP store: a roll call or a join over 200k ranks ends within a
// small multiple of its timeout, and when the store's host is frozen (SIGSTOP) the roll call
// names that host instead of the other survivors, within its window, and later calls fail fast,
// also when the host still answers the hello of a reconnect but no request after it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/store/join.hpp"
#include "core/store/roll_call.hpp"
#include "core/store/tcp_store.hpp"
#include "core/store/tests/store_options.hpp"
#include "dist/errors.hpp"

namespace {

using namespace std::chrono_literals;
using dist::core::TcpStore;
using store_test::options;
using Clock = std::chrono::steady_clock;

// Large enough that one request per member (the old roll call) takes far past the bounds below.
constexpr int huge_world = 200'000;

std::vector<int> world(int n) {
  std::vector<int> ranks(static_cast<std::size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

TEST(FailureReports, RollCallOverAHugeWorldHonoursItsWindow) {
  TcpStore store(options(true, 0));
  const auto start = Clock::now();
  const auto roll = dist::core::roll_call(store, "g/all_reduce #1", world(huge_world), 0, 2s);
  EXPECT_LT(Clock::now() - start, 6s);  // generous: three windows
  EXPECT_TRUE(roll.complete);
  ASSERT_EQ(roll.absent.size(), std::size_t{huge_world - 1});
  EXPECT_EQ(roll.absent.front(), 1);
  EXPECT_EQ(roll.absent.back(), huge_world - 1);
}

TEST(FailureReports, JoinOfAHugeWorldHonoursItsTimeout) {
  TcpStore store(options(true, 0));
  const auto start = Clock::now();
  try {
    dist::core::wait_for_members(store, world(huge_world), 0, 2s, "gloo", "world", "a hint");
    FAIL() << "a world of one present rank joined";
  } catch (const dist::TimeoutError& e) {
    EXPECT_EQ(e.missing_ranks().size(), std::size_t{huge_world - 1});
    EXPECT_NE(std::string(e.what()).find("1, 2, 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("and " + std::to_string(huge_world - 1 - 32) + " more"),
              std::string::npos);
    EXPECT_LT(std::string(e.what()).size(), 2000u);
  }
  EXPECT_LT(Clock::now() - start, 6s);  // generous: three times the timeout
}

// missing() is a bounded number of requests whatever the number of keys: asking about 200k keys
// costs far less than 200k single-key requests do on this machine, however fast it is (the
// bounds above are wall-clock times, which a fast enough machine could meet one key at a time).
TEST(FailureReports, MissingCostsFarLessThanOneRequestPerKey) {
  TcpStore store(options(true, 0));
  std::vector<std::string> keys;
  for (int r = 0; r < huge_world; ++r) keys.push_back("joined/" + std::to_string(r));
  store.set(keys[7], {});
  constexpr int probes = 2000;
  auto start = Clock::now();
  for (std::size_t i = 0; i < probes; ++i) (void)store.check({keys[i]});
  const auto per_request = (Clock::now() - start) / probes;
  start = Clock::now();
  const auto absent = store.missing(keys, 10s);
  const auto took = Clock::now() - start;
  EXPECT_EQ(absent.size(), keys.size() - 1);
  const auto us = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  };
  EXPECT_LT(took, per_request * huge_world / 4)
      << "missing() of " << huge_world << " keys took " << us(took) << " us; one request takes "
      << us(per_request) << " us here";
}

// A store hosted by a child process, which the test can stop as a frozen rank 0 would be.
class ChildHost {
 public:
  ChildHost() {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[0]);
      dist::core::TcpStoreServer server("127.0.0.1", 0);
      const std::uint16_t port = server.port();
      (void)!::write(fds[1], &port, sizeof port);
      for (;;) ::pause();
    }
    ::close(fds[1]);
    if (::read(fds[0], &port_, sizeof port_) != sizeof port_) port_ = 0;
    ::close(fds[0]);
  }
  ~ChildHost() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  void stop() { ::kill(pid_, SIGSTOP); }
  std::uint16_t port() const { return port_; }

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

TEST(FailureReports, AFrozenStoreHostIsNamedWithinTheWindow) {
  ChildHost host;
  ASSERT_NE(host.port(), 0);
  TcpStore store(options(false, host.port()));  // rank 1's client; rank 0 hosts the store
  store.set("before", {});
  host.stop();
  auto start = Clock::now();
  const auto roll = dist::core::roll_call(store, "g/all_reduce #7", {0, 1, 2}, 1, 1s);
  EXPECT_LT(Clock::now() - start, 6s);  // a window (at least 3 s a poll), not the 10 s timeout
  EXPECT_TRUE(roll.host_unresponsive);
  EXPECT_EQ(roll.absent, std::vector<int>{0}) << "rank 2, another survivor, is not to blame";
  start = Clock::now();  // what an exit path does next (record that it left) fails fast
  EXPECT_THROW(store.set("left/1", {}), dist::TimeoutError);
  EXPECT_LT(Clock::now() - start, 6s);  // the 2 s budget with room for a loaded machine
}

// A join that times out while the store's host is frozen names that host, not the ranks it
// could not ask about, and ends within the wait's timeout plus the client's grace and budget.
TEST(FailureReports, AJoinWithAFrozenStoreHostNamesTheHost) {
  ChildHost host;
  ASSERT_NE(host.port(), 0);
  TcpStore store(options(false, host.port()));  // rank 1's client
  std::string error = "no error";
  std::vector<int> named;
  const auto start = Clock::now();
  std::jthread joining([&] {
    try {
      dist::core::wait_for_members(store, {0, 1, 2}, 1, 1s, "gloo", "world", "a hint");
    } catch (const dist::TimeoutError& e) {
      error = e.what();
      named = e.missing_ranks();
    } catch (const std::exception& e) {
      error = std::string("not a TimeoutError: ") + e.what();
    }
  });
  std::this_thread::sleep_for(300ms);  // rank 1 has joined and waits for the others
  host.stop();
  joining.join();
  EXPECT_NE(error.find("the store's host, rank 0, is unresponsive"), std::string::npos) << error;
  EXPECT_EQ(named, std::vector<int>{0}) << error;
  EXPECT_LT(Clock::now() - start, 12s);  // 1 s + the client's 5 s grace + a 2 s budget
}

// A store host that answers each connection's hello and nothing after it: a host whose requests
// hang although its process still accepts connections. Its connections are kept until it goes.
class HelloOnlyHost {
 public:
  HelloOnlyHost() : listener_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof addr;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &size) != 0)
      throw std::runtime_error("HelloOnlyHost: cannot listen");
    port_ = ntohs(addr.sin_port);
    thread_ = std::jthread([this](std::stop_token stop) { serve(stop); });
  }
  ~HelloOnlyHost() {
    thread_.request_stop();
    thread_.join();
    for (const auto& c : clients_)
      if (c.fd >= 0) ::close(c.fd);
    ::close(listener_);
  }
  std::uint16_t port() const { return port_; }

 private:
  struct Client {
    int fd;
    std::string in;
    bool answered = false;
  };

  void serve(const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      for (const auto& c : clients_) fds.push_back({c.fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) clients_.push_back({::accept(listener_, nullptr, nullptr), {}});
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Client& c = clients_[i - 1];
        char buf[4096];
        const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
        if (n <= 0) {  // the client hung up
          ::close(c.fd);
          c.fd = -1;
          continue;
        }
        c.in.append(buf, static_cast<std::size_t>(n));
        if (!c.answered && c.in.size() >= 4) {  // the hello's frame: answer ok once it is whole
          std::uint32_t length = 0;
          for (int b = 3; b >= 0; --b)
            length = length << 8 | static_cast<unsigned char>(c.in[static_cast<std::size_t>(b)]);
          if (c.in.size() >= 4 + std::size_t{length}) {
            const char ok[5] = {1, 0, 0, 0, 0};  // a 1-byte payload: Status::ok
            (void)!::send(c.fd, ok, sizeof ok, MSG_NOSIGNAL);
            c.answered = true;
          }
        }
      }
    }
  }

  int listener_;
  std::uint16_t port_ = 0;
  std::vector<Client> clients_;
  std::jthread thread_;
};

// Once a request has passed its deadline, the next ones get a short budget (2 s) even when the
// host answers the reconnect's hello, so failure and exit paths do not each wait the store's
// whole timeout (10 s here).
TEST(FailureReports, AStoreThatStoppedAnsweringGetsAShortBudget) {
  HelloOnlyHost host;
  TcpStore store(options(false, host.port()));  // connects: the hello is answered
  EXPECT_THROW(store.set("g/all_reduce #9/answer", {}, 500ms), dist::TimeoutError);
  const auto start = Clock::now();
  try {
    store.set("left/1", {});  // the store's 10 s timeout
    ADD_FAILURE() << "a host that answers nothing took a set";
  } catch (const dist::TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0, is unresponsive"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, 6s) << "a later request waited the store's whole timeout";
}

}  // namespace
