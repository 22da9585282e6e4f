// The TCP store beyond the Store contract: many client threads, connect retries and timeouts,
// the port-in-use error, and robustness: garbage, oversized or truncated messages sent to the
// port close only that connection, and the server keeps serving everyone else.
#include "core/store/tcp_store.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/store/hash_store.hpp"
#include "core/store/tests/raw_socket.hpp"
#include "core/store/tests/store_options.hpp"
#include "dist/errors.hpp"
#include "testing/ports.hpp"

namespace {

using namespace std::chrono_literals;
using dist::core::Bytes;
using dist::core::TcpStore;
using dist::core::to_bytes;
using store_test::options;
using Clock = std::chrono::steady_clock;
using store_test::frame;
using store_test::hello;
using store_test::RawSocket;
using test_support::free_port;

TEST(TcpStore, ServesManyClientThreads) {
  TcpStore server(options(true, 0));
  constexpr int threads = 8;
  std::vector<std::jthread> workers;
  std::vector<int> ok(threads, 0);
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      TcpStore client(options(false, server.port()));
      client.set("from" + std::to_string(t), to_bytes(std::to_string(t * 10)));
      client.add("arrived", 1);
      std::vector<std::string> all;
      for (int u = 0; u < threads; ++u) all.push_back("from" + std::to_string(u));
      client.wait(all, 10s);
      bool good = true;
      for (int u = 0; u < threads; ++u)
        good =
            good && client.get("from" + std::to_string(u), 1s) == to_bytes(std::to_string(u * 10));
      ok[static_cast<std::size_t>(t)] = good ? 1 : 0;
    });
  workers.clear();
  EXPECT_EQ(ok, std::vector<int>(threads, 1));
  EXPECT_EQ(server.add("arrived", 0), threads);
}

TEST(TcpStore, OneClientSharedByThreads) {
  TcpStore server(options(true, 0));
  TcpStore client(options(false, server.port()));
  std::vector<std::jthread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&] {
      for (int i = 0; i < 25; ++i) client.add("n", 1);
    });
  workers.clear();
  EXPECT_EQ(client.add("n", 0), 100);
}

TEST(TcpStore, PortInUseIsAClearError) {
  TcpStore first(options(true, 0));
  const std::uint16_t port = first.port();
  try {
    TcpStore second(options(true, port));
    FAIL() << "a second server bound the same port";
  } catch (const dist::BackendError& e) {
    const std::string expected = "port " + std::to_string(port) + " on 127.0.0.1 is already in use";
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
  first.set("still", to_bytes("works"));
  EXPECT_EQ(first.get("still", 1s), to_bytes("works"));
}

TEST(TcpStore, ConnectTimesOutWhenNoServerComes) {
  const std::uint16_t port = free_port();
  const auto start = Clock::now();
  try {
    TcpStore client(options(false, port, 300ms));
    FAIL() << "connected to nothing";
  } catch (const dist::TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("could not connect"), std::string::npos) << what;
    EXPECT_NE(what.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << what;
  }
  const auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, 300ms);
  EXPECT_LT(elapsed, 3s);
}

TEST(TcpStore, ConnectRetriesUntilTheServerIsUp) {
  const std::uint16_t port = free_port();
  std::unique_ptr<TcpStore> server;
  std::jthread late([&] {
    std::this_thread::sleep_for(300ms);
    server = std::make_unique<TcpStore>(options(true, port));
  });
  TcpStore client(options(false, port, 10s));
  client.set("k", to_bytes("v"));
  late.join();
  EXPECT_EQ(server->get("k", 1s), to_bytes("v"));
}

TEST(TcpStore, LosingTheServerIsAnErrorNotAHang) {
  auto server = std::make_unique<TcpStore>(options(true, 0));
  TcpStore client(options(false, server->port(), 60s));  // a long default timeout
  client.set("k", {});
  server.reset();
  const auto start = Clock::now();
  EXPECT_THROW(client.get("k", 500ms), dist::Error);  // the connection breaks
  EXPECT_THROW(client.set("k", {}), dist::Error);     // a short reconnect attempt, not 60 s
  EXPECT_THROW(client.add("n", 1), dist::Error);
  EXPECT_LT(Clock::now() - start, 10s);
}

// Failure handling asks a store where it lives: a rank whose store vanishes names the host.
TEST(TcpStore, SaysWhichRankHostsIt) {
  auto server_options = options(true, 0);
  server_options.server_rank = 3;
  auto server = std::make_shared<TcpStore>(server_options);
  auto client_options = options(false, server->port());
  client_options.server_rank = 3;
  TcpStore client(client_options);
  EXPECT_TRUE(server->hosted_here());
  EXPECT_FALSE(client.hosted_here());
  EXPECT_EQ(client.host_rank(), 3);
  const dist::core::PrefixStore prefixed("group", server);
  EXPECT_TRUE(prefixed.hosted_here());
  EXPECT_EQ(prefixed.host_rank(), 3);
  EXPECT_EQ(TcpStore(options(false, server->port())).host_rank(), 0);  // rendezvous: rank 0
}

TEST(TcpStore, ValueOverTheMessageCapIsInvalid) {
  auto o = options(true, 0);
  o.max_message = 1024;
  TcpStore store(o);
  EXPECT_THROW(store.set("big", Bytes(2048, 'x')), dist::InvalidArgument);
  store.set("small", Bytes(100, 'x'));
  EXPECT_EQ(store.get("small", 1s).size(), 100u);
}

// Sends `bytes` on a fresh connection, expects the server to close it, and checks that an
// existing client and a new one are still served.
void expect_rejected(TcpStore& server, TcpStore& existing, const std::string& bytes,
                     bool close_after_send = false) {
  const std::size_t before = server.server()->rejected_connections();
  {
    RawSocket raw(server.port());
    ASSERT_TRUE(raw.connected());
    raw.send(hello() + bytes);  // past the hello, so the request itself is what is refused
    if (!close_after_send) {
      EXPECT_TRUE(raw.closed_by_server(2s)) << "the server kept a connection that sent garbage";
      EXPECT_EQ(server.server()->rejected_connections(), before + 1);
    }
  }
  existing.add("served", 1);
  TcpStore fresh(options(false, server.port()));
  fresh.set("after", to_bytes("ok"));
  EXPECT_EQ(existing.get("after", 1s), to_bytes("ok"));
}

TEST(TcpStore, GarbageBytesCloseOnlyThatConnection) {
  TcpStore server(options(true, 0));
  TcpStore existing(options(false, server.port()));
  expect_rejected(server, existing, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  expect_rejected(server, existing, frame(3, std::string("\x63\x01\x02", 3)));  // unknown command
  expect_rejected(server, existing, frame(0, ""));                              // empty message
  // A set whose key claims 1000 bytes in a 9-byte message.
  expect_rejected(server, existing,
                  frame(9, std::string("\x01\xe8\x03\x00\x00"
                                       "abcd",
                                       9)));
  // A valid get followed by trailing bytes.
  expect_rejected(server, existing, frame(8, std::string("\x02\x01\x00\x00\x00kXX", 8)));
  // A wait claiming 2^32-1 keys.
  expect_rejected(
      server, existing,
      frame(13, std::string("\x05\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff", 13)));
  EXPECT_EQ(existing.add("served", 0), 6);
}

TEST(TcpStore, OversizedLengthPrefixIsRejected) {
  auto o = options(true, 0);
  o.max_message = 4096;
  TcpStore server(o);
  TcpStore existing(options(false, server.port()));
  expect_rejected(server, existing, frame(0xFFFFFFFFu, "xyz"));
  expect_rejected(server, existing, frame(4097, std::string(100, 'a')));
  EXPECT_EQ(existing.add("served", 0), 2);
}

TEST(TcpStore, DefaultCapIs64MiBAndHugePrefixesNeverAllocate) {
  TcpStore server(options(true, 0));
  TcpStore existing(options(false, server.port()));
  expect_rejected(server, existing, frame((64u << 20) + 1, "abc"));
  // Just under the cap: the server waits for the body; hanging up mid-message drops it quietly.
  expect_rejected(server, existing, frame(64u << 20, std::string(1000, 'a')), true);
}

TEST(TcpStore, ClientHangingUpMidMessageDoesNotDisturbTheServer) {
  TcpStore server(options(true, 0));
  TcpStore existing(options(false, server.port()));
  expect_rejected(server, existing, frame(100, "\x01\x05"), true);
  expect_rejected(server, existing, "\x10\x00", true);
  // A parked wait whose client vanishes.
  expect_rejected(
      server, existing,
      frame(18, std::string("\x05\x10\x27\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00q",
                            18)),
      true);
  existing.set("q", {});
  EXPECT_EQ(existing.add("served", 0), 3);
}

TEST(TcpStore, WaitTimeoutComesFromTheServerNamingTheKeys) {
  TcpStore server(options(true, 0));
  TcpStore client(options(false, server.port()));
  client.set("here", {});
  const auto start = Clock::now();
  try {
    client.wait({"here", "gone"}, 200ms);
    FAIL() << "wait returned";
  } catch (const dist::TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("'gone'"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, 2s);
  client.set("gone", {});  // the connection is still usable after a timeout
  client.wait({"gone"}, 1s);
}

}  // namespace

// A job whose ranks claim their ranks keeps the call layer's keys ("calls/...") to them: a
// stranger who claims no rank can still read and write elsewhere, but its words never reach a
// rank's diagnosis (issue 38: a stranger's DesyncError text became every rank's error).
TEST(TcpStore, OnlyRanksWriteTheCallLayersKeys) {
  auto server_options = options(true, 0);
  server_options.rank = 0;
  server_options.world_size = 2;
  TcpStore server(server_options);
  auto member_options = options(false, server.port());
  member_options.rank = 1;
  TcpStore member(member_options);
  member.set("calls/desync", to_bytes("found by rank 1"));
  TcpStore stranger(options(false, server.port()));
  stranger.set("elsewhere", to_bytes("fine"));
  for (const auto& write : std::vector<std::function<void()>>{
           [&] { stranger.set("calls/desync", to_bytes("a stranger's words")); },
           [&] { stranger.add("calls/desync/claims", 1); },
           [&] {
    stranger.compare_set("calls/desync", to_bytes("found by rank 1"), to_bytes("x"));
           },
           [&] { stranger.delete_key("calls/desync"); }}) {
    try {
      write();
      ADD_FAILURE() << "a stranger wrote a call-layer key";
    } catch (const dist::Error& e) {
      EXPECT_NE(std::string(e.what()).find("claimed no rank"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(dist::core::to_string(stranger.get("calls/desync", 1s)), "found by rank 1");
  EXPECT_EQ(dist::core::to_string(server.get("elsewhere", 1s)), "fine");
}

// A store whose clients claim no ranks (the public TCPStore, as torch's) lets anyone write them.
TEST(TcpStore, AStoreWithoutRankClaimsLetsAnyClientWriteEveryKey) {
  TcpStore server(options(true, 0));
  TcpStore client(options(false, server.port()));
  client.set("calls/status/0", to_bytes("x"));
  EXPECT_EQ(dist::core::to_string(server.get("calls/status/0", 1s)), "x");
}

// What the store's host knows of the ranks' connections, for the diagnosis of a rank that stopped
// answering: open (and how long silent), waiting in a request, closed (it exited), or unknown.
TEST(TcpStore, ContactsSayWhoseConnectionIsOpenSilentWaitingOrClosed) {
  using State = dist::Store::RankContact::State;
  auto server_options = options(true, 0);
  server_options.rank = 0;
  server_options.world_size = 4;
  TcpStore server(server_options);
  const auto member = [&](int rank) {
    auto o = options(false, server.port());
    o.rank = rank;
    return std::make_unique<TcpStore>(o);
  };
  auto one = member(1);
  auto two = member(2);
  auto three = member(3);
  one.reset();  // rank 1 exits
  std::jthread waiting([&] { EXPECT_THROW(three->wait({"never"}, 2s), dist::TimeoutError); });
  std::this_thread::sleep_for(300ms);
  const auto c = server.contacts({0, 1, 2, 3, 9}, 1s);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0].state, State::open);  // this request's own connection
  EXPECT_LT(c[0].since, 100ms);
  EXPECT_EQ(c[1].state, State::closed);
  EXPECT_GE(c[1].since, 250ms);
  EXPECT_EQ(c[2].state, State::open);
  EXPECT_GE(c[2].since, 250ms);  // silent since its hello
  EXPECT_EQ(c[3].state, State::waiting);
  EXPECT_EQ(c[4].state, State::unknown);
  EXPECT_EQ(dist::core::HashStore().contacts({0}, 1s).front().state, State::unknown);
}
