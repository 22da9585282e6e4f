// Failure reports through a TCP store: a roll call or a join over 200k ranks ends within a
// small multiple of its timeout, and when the store's host is frozen (SIGSTOP) the roll call
// names that host instead of the other survivors, within its window, and later calls fail fast.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <numeric>
#include <string>
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
  const auto named = dist::core::name_absentees(&store, "g/all_reduce #8", {0, 1, 2}, 1, 1s, -1);
  EXPECT_EQ(named.ranks, std::vector<int>{0});
  EXPECT_NE(named.phrase.find("rank 0, is unresponsive"), std::string::npos) << named.phrase;
  start = Clock::now();  // what an exit path does next (record that it left) fails fast
  EXPECT_THROW(store.set("left/1", {}), dist::TimeoutError);
  EXPECT_LT(Clock::now() - start, 6s);  // the 2 s budget with room for a loaded machine
}

}  // namespace
