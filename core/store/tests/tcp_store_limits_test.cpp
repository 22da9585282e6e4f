// What the TCP store bounds and whom it serves: a connection's memory follows the bytes it sent,
// half-sent messages and silent connections are dropped after the idle deadline, values, key
// lists and the store's total have limits, a second connection claiming a rank is refused naming
// both, and a server with a secret refuses clients without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/store/tcp_store.hpp"
#include "core/store/tests/raw_socket.hpp"
#include "core/store/tests/store_options.hpp"
#include "core/tests/fuzz_support.hpp"
#include "dist/errors.hpp"

#if defined(__SANITIZE_ADDRESS__)
// ASan keeps freed blocks resident in its quarantine (256 MiB by default) for use-after-free
// checks: the server's outgrown receive buffers and the test's own stayed there and read as
// +298 MiB of growth in a CI run of the key-list test. 8 MiB keeps the checks for recent frees and
// the peak close to what the program holds. (ASAN_OPTIONS, parsed after this, can override it.)
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=8"; }
#endif

namespace {

using namespace std::chrono_literals;
using dist::core::Bytes;
using dist::core::TcpStore;
using store_test::Clock;
using store_test::frame;
using store_test::hello;
using store_test::options;
using store_test::RawSocket;

// The message of the error `f` throws as E ("" when it throws nothing).
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// This process's resident memory in bytes.
std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

TEST(TcpStoreLimits, AnnouncedSizeCostsOnlyTheBytesThatArrive) {
  TcpStore server(options(true, 0));
  const std::size_t before = resident_bytes();
  std::vector<std::unique_ptr<RawSocket>> raws;
  for (int i = 0; i < 64; ++i) {  // each announces 64 MiB and sends 5 bytes
    raws.push_back(std::make_unique<RawSocket>(server.port()));
    raws.back()->send(hello() + frame(64u << 20, "\x01\x05\x00\x00\x00"));
  }
  std::this_thread::sleep_for(500ms);
  TcpStore(options(false, server.port())).set("served", {});  // the server kept up
  const std::size_t grown = resident_bytes() - std::min(before, resident_bytes());
  EXPECT_LT(grown, std::size_t{24} << 20) << "64 half-sent messages cost " << grown << " bytes";
}

// A key costs 4 bytes on the wire and sizeof(std::string) decoded: a 64 MiB request of 16M empty
// keys would take 512 MiB while handled. A list over max_keys is refused before any key is
// decoded, with an error naming the limit; the connection and the server keep serving.
TEST(TcpStoreLimits, AKeyListCostsNoMoreThanTheBytesThatArrive) {
  TcpStore store(options(true, 0));  // the default limits: 64 MiB a message, 2^20 keys a request
  store.set("here", {});
  const std::uint32_t keys = (64u << 20) / 4 - 2;  // the most empty keys a message can carry
  const std::string check = "\x04" + store_test::u32_text(keys);  // then keys * 4 zero bytes
  RawSocket raw(store.port());
  raw.send(hello());
  ASSERT_EQ(raw.read_frame(5s), std::string(1, '\0'));  // hello accepted
  const long rss_kib = static_cast<long>(resident_bytes() >> 10);
  const long before = fuzz_support::peak_kib(true);
  if (before > rss_kib + (16 << 10)) GTEST_SKIP() << "the peak cannot be reset (clear_refs)";
  raw.send(frame(static_cast<std::uint32_t>(check.size()) + 4 * keys, check));
  const std::string zeros(std::size_t{1} << 20, '\0');
  for (std::size_t sent = 0; sent < std::size_t{4} * keys; sent += zeros.size())
    raw.send(zeros.data(), std::min(zeros.size(), std::size_t{4} * keys - sent));
  const std::string refused = raw.read_frame(30s);
  const long growth_kib = fuzz_support::peak_kib(false) - before;
  const long amplified_kib = static_cast<long>(keys * sizeof(std::string) >> 10);
  std::printf("a check of %u empty keys (%u MiB on the wire, %ld MiB decoded): peak +%ld MiB\n",
              keys, (4 * keys) >> 20, amplified_kib >> 10, growth_kib >> 10);
  ASSERT_FALSE(refused.empty()) << "no reply";
  EXPECT_EQ(refused[0], '\x03') << "not an error reply";
  EXPECT_TRUE(contains(refused, std::to_string(keys) + " keys exceeds the store's limit of " +
                                    std::to_string(1 << 20) +
                                    " keys per request (TcpStoreOptions::max_keys)"))
      << refused;
  // TSan's shadow memory hides the server's growth; ASan (its quarantine cut to 8 MiB below) and
  // plain builds measure it.
#if !defined(__SANITIZE_THREAD__)
  EXPECT_LT(growth_kib, amplified_kib / 2) << "the server decoded the list";
#endif
  // The same connection is still in step: a check of one key that is set.
  const std::string one = "\x04" + store_test::u32_text(1) + store_test::u32_text(4) + "here";
  raw.send(frame(static_cast<std::uint32_t>(one.size()), one));
  EXPECT_EQ(raw.read_frame(5s), std::string("\0\x01", 2));
  EXPECT_EQ(store.server()->rejected_connections(), 0u);
  EXPECT_TRUE(TcpStore(options(false, store.port())).check({"here"}));
}

// Clients bound key lists too: a wait or check over their max_keys is refused before it is sent,
// missing() is sent in batches of at most max_keys, and a server's refusal names the option.
TEST(TcpStoreLimits, ClientsHonourMaxKeys) {
  auto o = options(true, 0);
  o.max_keys = 2;
  TcpStore strict(o);
  strict.set("a", {});
  const auto waited = error_of<dist::InvalidArgument>([&] { strict.wait({"a", "b", "c"}, 1s); });
  EXPECT_TRUE(contains(waited, "3 keys exceed the limit of 2 keys per request")) << waited;
  EXPECT_TRUE(contains(waited, "TcpStoreOptions::max_keys")) << waited;
  EXPECT_EQ(strict.missing({"a", "b", "c", "a", "d"}, 1s),
            (std::vector<std::string>{"b", "c", "d"}));
  TcpStore lax(options(false, strict.port()));  // the default limit: the server refuses
  const auto checked = error_of<dist::BackendError>([&] { (void)lax.check({"a", "b", "c"}); });
  EXPECT_TRUE(contains(checked, "a check request of 3 keys exceeds the store's limit of 2 keys"))
      << checked;
  EXPECT_TRUE(lax.check({"a"}));
}

TEST(TcpStoreLimits, HeaderOverTheLimitIsRefusedAtOnce) {
  auto o = options(true, 0);
  o.max_message = 1 << 20;
  TcpStore server(o);
  RawSocket raw(server.port());
  raw.send(hello() + frame((1 << 20) + 1, "x"));
  EXPECT_TRUE(raw.closed_by_server(2s));
}

TEST(TcpStoreLimits, HalfSentMessageIsDroppedAfterTheIdleDeadline) {
  auto o = options(true, 0);
  o.idle_timeout = 300ms;
  TcpStore server(o);
  TcpStore existing(options(false, server.port()));
  RawSocket raw(server.port());
  raw.send(hello() + frame(1000, "\x01\x05"));
  const auto start = Clock::now();
  EXPECT_TRUE(raw.closed_by_server(5s)) << "a half-sent message was kept past the deadline";
  EXPECT_GE(Clock::now() - start, 200ms);
  std::this_thread::sleep_for(500ms);
  existing.set("idle clients are not dropped", {});  // a client between requests is kept
}

// A slow loris: a byte every 100 ms, of a hello and of a message after it. The deadline counts
// from the message's first byte (each byte restarted it, and such a client stayed for good).
TEST(TcpStoreLimits, AClientTricklingItsBytesIsDroppedAtTheIdleDeadline) {
  auto o = options(true, 0);
  o.idle_timeout = 500ms;
  TcpStore server(o);
  for (const bool after_hello : {false, true}) {
    RawSocket raw(server.port());
    if (after_hello) raw.send(hello());
    const std::string trickle = after_hello ? frame(1000, std::string(1000, 'x')) : hello();
    const auto start = Clock::now();
    bool closed = false;
    for (std::size_t i = 0; i < trickle.size() && !closed; ++i) {
      raw.send(&trickle[i], 1);
      closed = raw.closed_by_server(100ms);
    }
    EXPECT_TRUE(closed) << (after_hello ? "a message" : "a hello") << " trickled in for good";
    EXPECT_LT(Clock::now() - start, 3s);
  }
}

TEST(TcpStoreLimits, ConnectionThatNeverSaysHelloIsDropped) {
  auto o = options(true, 0);
  o.idle_timeout = 300ms;
  TcpStore server(o);
  RawSocket raw(server.port());
  EXPECT_TRUE(raw.closed_by_server(5s));
  RawSocket big(server.port());  // before the hello, messages are capped at a few KiB
  big.send(frame(1 << 20, "\x07"));
  EXPECT_TRUE(big.closed_by_server(100ms));
}

TEST(TcpStoreLimits, ValueOverTheLimitIsRefused) {
  auto o = options(true, 0);
  o.max_value = 1000;
  TcpStore server(o);
  const auto refused = error_of<dist::InvalidArgument>([&] { server.set("k", Bytes(1001, 'x')); });
  EXPECT_TRUE(contains(refused, "max_value")) << refused;
  TcpStore lax(
      options(false, server.port()));  // a client with the default limit: the server says no
  const auto by_server = error_of<dist::BackendError>([&] { lax.set("k", Bytes(1001, 'x')); });
  EXPECT_TRUE(contains(by_server, "1001 bytes for key 'k'")) << by_server;
  lax.set("k", Bytes(1000, 'x'));
  EXPECT_EQ(lax.get("k", 1s).size(), 1000u);
}

TEST(TcpStoreLimits, TheStoreHasAQuota) {
  auto o = options(true, 0);
  o.max_total = 10000;
  TcpStore store(o);
  for (int i = 0; i < 3; ++i) store.set("k" + std::to_string(i), Bytes(3000, 'x'));
  const auto refused = error_of<dist::BackendError>([&] { store.set("k3", Bytes(3000, 'x')); });
  EXPECT_TRUE(contains(refused, "quota")) << refused;
  store.set("k0", Bytes(2000, 'y'));  // replacing a value counts only the difference
  store.set("k3", Bytes(1000, 'z'));
  EXPECT_EQ(store.get("k3", 1s).size(), 1000u);
}

TEST(TcpStoreLimits, ADuplicateRankIsRefusedNamingBothConnections) {
  auto o = options(true, 0);
  o.rank = 0;
  TcpStore server(o);
  auto first = options(false, server.port());
  first.rank = 1;
  auto holder = std::make_unique<TcpStore>(first);
  const auto refused = error_of<dist::BackendError>([&] { TcpStore second(first); });
  EXPECT_TRUE(contains(refused, "rank 1 is already connected from 127.0.0.1:")) << refused;
  EXPECT_TRUE(contains(refused, "this connection from 127.0.0.1:")) << refused;
  EXPECT_TRUE(contains(refused, "RANK=1")) << refused;
  holder.reset();  // once the first has gone, the rank is free again
  std::string again = "not tried";
  for (auto until = Clock::now() + 3s; !again.empty() && Clock::now() < until;) {
    again = error_of<dist::BackendError>([&] { TcpStore later(first); });
    if (!again.empty()) std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(again, "");
}

// A client blocked in a wait is still connected: a second claim of its rank is refused, naming
// both; a client that hangs up while parked frees its rank at once (not at the wait's timeout).
TEST(TcpStoreLimits, ADuplicateRankIsRefusedWhileTheFirstIsParkedInAWait) {
  TcpStore server(options(true, 0));
  auto first = options(false, server.port());
  first.rank = 1;
  TcpStore holder(first);
  std::string waited = "not returned";
  std::jthread parked([&] { waited = error_of<dist::Error>([&] { holder.wait({"go"}, 20s); }); });
  std::this_thread::sleep_for(200ms);  // the wait is parked in the server
  const auto refused = error_of<dist::BackendError>([&] { TcpStore second(first); });
  EXPECT_TRUE(contains(refused, "rank 1 is already connected from 127.0.0.1:")) << refused;
  EXPECT_TRUE(contains(refused, "this connection from 127.0.0.1:")) << refused;
  server.set("go", {});
  parked.join();
  EXPECT_EQ(waited, "") << "the parked wait failed";

  RawSocket raw(server.port());  // claims rank 2, parks a long wait, hangs up
  raw.send(hello("", 2) + store_test::wait_request("never", 600'000));
  for (auto until = Clock::now() + 5s;
       server.server()->claimed_ranks() < 2 && Clock::now() < until;)
    std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(100ms);  // and its wait parked
  auto other = options(false, server.port());
  other.rank = 2;
  EXPECT_NE(error_of<dist::BackendError>([&] { TcpStore c(other); }), "");  // still connected
  raw.close();
  std::string again = "not tried";
  const auto start = Clock::now();
  for (auto until = start + 2s; !again.empty() && Clock::now() < until;) {
    again = error_of<dist::BackendError>([&] { TcpStore later(other); });
    if (!again.empty()) std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(again, "") << "a hung-up client parked in a wait still holds its rank";
}

// Without a secret anyone may claim ranks: the server keeps the claims of open connections only,
// and, given the world size, refuses ranks outside it.
TEST(TcpStoreLimits, RankClaimsAreBoundedByOpenConnectionsAndTheWorld) {
  TcpStore store(options(true, 0));
  const auto* server = store.server();
  std::vector<std::unique_ptr<RawSocket>> raws;
  for (int i = 0; i < 200; ++i) {
    raws.push_back(std::make_unique<RawSocket>(store.port()));
    raws.back()->send(hello("", 1000 + i));
  }
  for (auto until = Clock::now() + 3s; server->claimed_ranks() < 200 && Clock::now() < until;)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server->claimed_ranks(), 200u);
  raws.clear();
  for (auto until = Clock::now() + 3s; server->claimed_ranks() > 0 && Clock::now() < until;)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server->claimed_ranks(), 0u) << "the claims of closed connections are kept";
  // Nor when they closed: without a world size, any number may be claimed.
  EXPECT_EQ(store.contacts({1000, 1199}, 1s)[1].state, dist::Store::RankContact::State::unknown);

  auto o = options(true, 0);
  o.world_size = 4;
  TcpStore world(o);
  auto client = options(false, world.port());
  client.rank = 7;
  const auto outside = error_of<dist::BackendError>([&] { TcpStore c(client); });
  EXPECT_TRUE(contains(outside, "claims rank 7, but the store serves a world of 4 ranks"))
      << outside;
  EXPECT_EQ(world.server()->claimed_ranks(), 0u);
  client.rank = 3;
  TcpStore inside(client);
  EXPECT_EQ(world.server()->claimed_ranks(), 1u);
  // A process given another WORLD_SIZE is told so, not left to time out.
  client.rank = 1;
  client.world_size = 3;
  const auto other_world = error_of<dist::BackendError>([&] { TcpStore c(client); });
  EXPECT_TRUE(contains(other_world,
                       "was given WORLD_SIZE=3, but the store's host (rank 0) was "
                       "given 4"))
      << other_world;
}

TEST(TcpStoreLimits, AServerWithASecretRefusesClientsWithoutIt) {
  auto o = options(true, 0);
  o.secret = "job-secret-1234";
  TcpStore server(o);
  server.set("k", {});
  auto client = options(false, server.port());
  const auto start = Clock::now();
  const auto none = error_of<dist::BackendError>([&] { TcpStore c(client); });
  EXPECT_TRUE(contains(none, "DIST_STORE_SECRET is unset")) << none;
  client.secret = "job-secret-1235";
  const auto wrong = error_of<dist::BackendError>([&] { TcpStore c(client); });
  EXPECT_TRUE(contains(wrong, "is not the job's")) << wrong;
  EXPECT_FALSE(contains(wrong, "1234")) << "the error leaks the secret: " << wrong;
  EXPECT_LT(Clock::now() - start, 3s);  // refused at once, not after the timeout
  client.secret = o.secret;
  TcpStore good(client);
  good.wait({"k"}, 1s);
  RawSocket raw(server.port());  // a raw request without the hello is refused too
  raw.send(frame(6, std::string("\x02\x01\x00\x00\x00k", 6)));
  EXPECT_TRUE(raw.closed_by_server(2s));
}

}  // namespace

namespace {

// A rank that re-initialises faster than rank 0 reaches rank 0's previous store, still open until
// rank 0's destroy_dist: told that it serves an earlier world, it waits for the new one on the
// same port instead of joining the old (whose keys are the previous world's).
TEST(TcpStoreLimits, AClientOfALaterWorldWaitsForItsStoreInsteadOfJoiningTheOld) {
  auto o = options(true, 0);
  o.generation = 1;
  auto old_world = std::make_unique<TcpStore>(o);
  old_world->set("world", dist::core::to_bytes("first"));
  const std::uint16_t port = old_world->port();
  std::unique_ptr<TcpStore> new_world;
  std::thread rank0([&] {
    std::this_thread::sleep_for(400ms);
    old_world.reset();
    auto next = options(true, port);
    next.generation = 2;
    new_world = std::make_unique<TcpStore>(next);
    new_world->set("world", dist::core::to_bytes("second"));
  });
  auto client = options(false, port);
  client.generation = 2;
  std::string seen;
  try {
    TcpStore c(client);
    seen = dist::core::to_string(c.get("world", 5s));
  } catch (const dist::Error& e) {
    seen = e.what();
  }
  rank0.join();
  EXPECT_EQ(seen, "second");
  // A client of an earlier world than the store's is refused, saying why.
  client.generation = 1;
  const auto earlier = error_of<dist::BackendError>([&] { TcpStore c(client); });
  EXPECT_TRUE(contains(earlier, "is for world #1 of its process, the store serves world #2"))
      << earlier;
}

}  // namespace
