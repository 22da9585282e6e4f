// A fuzz target for the TCP store's wire protocol, run as a bounded test: a TcpStoreServer in this
// process, and a seeded mutation loop over a corpus of valid client conversations
// (core/store/tests/fuzz_corpus/<name>.bin: a hello frame and requests). Each iteration mutates
// one to four of them (core/tests/fuzz_support.hpp's mutator, plus truncation and lying length
// fields), sends them over raw connections in interleaved chunks with occasional pauses, reads
// what comes back, and closes them or leaves some open for later. Afterwards the server must be
// alive and correct (a TcpStore client sets, gets, adds and waits), its open connections must
// drain back, and its peak memory must stay within a bound tied to the server's limits. It runs
// for DIST_FUZZ_SECONDS (default 3; ci/sanitize sets 4) and prints executions, seconds, crashes.
//
// Environment: DIST_FUZZ_SECONDS, DIST_FUZZ_SEED (default 1), DIST_FUZZ_VERBOSE=1 (prints each
// iteration's bytes before sending). The corpus is written by the generator below:
//   DIST_FUZZ_WRITE_CORPUS=1 build/core/store/store_tests --gtest_filter=StoreFuzz.Corpus*
// rewrites it after a change of the protocol; the test checks it otherwise.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/store/tcp_protocol.hpp"
#include "core/store/tcp_store.hpp"
#include "core/store/tests/raw_socket.hpp"
#include "core/store/tests/store_options.hpp"
#include "core/tests/fuzz_support.hpp"

#ifndef DIST_STORE_FUZZ_CORPUS_DIR
#error "DIST_STORE_FUZZ_CORPUS_DIR (the corpus folder) is set by core/store/CMakeLists.txt"
#endif

namespace {

using namespace std::chrono_literals;
using namespace dist::core::tcp_store;
using fuzz_support::Bytes;
using fuzz_support::env_or;
using Clock = std::chrono::steady_clock;

// The fuzzed server's limits: small, so the bound on its memory is small too.
dist::core::TcpStoreServerOptions server_limits() {
  return {.max_message = 64 << 10,
          .max_value = 16 << 10,
          .max_total = 1 << 20,
          .idle_timeout = 200ms,
          .secret = {}};
}

Bytes as_bytes(const std::vector<char>& frames) {
  Bytes out(frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) out[i] = static_cast<std::byte>(frames[i]);
  return out;
}

std::vector<char> hello_frame(std::int32_t rank) {
  return Writer()
      .u8(static_cast<std::uint8_t>(Command::hello))
      .u32(static_cast<std::uint32_t>(rank))
      .u8(1)
      .str("")
      .finish();
}

Writer request(Command c) {
  Writer w;
  w.u8(static_cast<std::uint8_t>(c));
  return w;
}

// The corpus: a conversation per file, each a hello (most without a rank) and its requests.
std::map<std::string, Bytes> corpus_samples() {
  const std::vector<std::string> keys{"a", "rank/1", ""};
  std::map<std::string, std::vector<std::vector<char>>> talks{
      {"hello", {}},
      {"hello_rank", {request(Command::get).str("a").finish()}},
      {"set", {request(Command::set).str("a").bytes({'v', '1'}).finish()}},
      {"get", {request(Command::get).str("a").finish()}},
      {"add", {request(Command::add).str("n").u64(5).finish()}},
      {"wait", {request(Command::wait).u64(50).strings(keys).finish()}},
      {"wait_long", {request(Command::wait).u64(60'000).strings({"never"}).finish()}},
      {"check", {request(Command::check).strings(keys).finish()}},
      {"missing", {request(Command::missing).strings(keys).finish()}},
      {"compare_set",
       {request(Command::compare_set).str("a").bytes({}).bytes({'v'}).finish(),
        request(Command::compare_set).str("a").bytes({'v'}).bytes({'w', 'x'}).finish()}},
      {"delete_key",
       {request(Command::set).str("d").bytes({'1'}).finish(),
        request(Command::delete_key).str("d").finish(),
        request(Command::delete_key).str("d").finish()}},
      {"num_keys", {request(Command::num_keys).finish()}},
      {"contacts", {request(Command::contacts).u32(3).u32(0).u32(1).u32(7).finish()}},
      {"set_get_add",
       {request(Command::set).str("k").bytes(std::vector<char>(100, 'x')).finish(),
        request(Command::get).str("k").finish(),
        request(Command::add).str("k2").u64(~0ull).finish()}},
  };
  std::map<std::string, Bytes> out;
  for (const auto& [name, frames] : talks) {
    std::vector<char> all = hello_frame(name == "hello_rank" ? 1 : -1);
    for (const auto& f : frames) all.insert(all.end(), f.begin(), f.end());
    out[name] = as_bytes(all);
  }
  return out;
}

std::filesystem::path corpus_dir() { return DIST_STORE_FUZZ_CORPUS_DIR; }

TEST(StoreFuzz, CorpusIsTheWriterOutput) {
  const bool write = env_or("DIST_FUZZ_WRITE_CORPUS", 0) == 1;
  if (write) std::filesystem::create_directories(corpus_dir());
  for (const auto& [name, sample] : corpus_samples()) {
    const auto path = corpus_dir() / (name + ".bin");
    if (write) {
      fuzz_support::write_file(path, sample);
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing (see the file comment)";
    EXPECT_EQ(fuzz_support::hex(fuzz_support::read_file(path), 1 << 20),
              fuzz_support::hex(sample, 1 << 20))
        << path << " differs from the generator";
  }
}

// The offsets where the frames of a valid conversation start.
std::vector<std::size_t> frame_starts(const Bytes& talk) {
  std::vector<std::size_t> starts;
  for (std::size_t at = 0; at + header_size <= talk.size();) {
    starts.push_back(at);
    char h[header_size];
    std::memcpy(h, talk.data() + at, header_size);
    at += header_size + decode_header(h);
  }
  return starts;
}

// The generic mutations, then sometimes a lie in one frame's length field or a truncation.
Bytes mutate(const Bytes& seed, const std::vector<const Bytes*>& others, std::mt19937_64& rng) {
  Bytes b = rng() % 8 == 0 ? seed : fuzz_support::mutate(seed, others, rng);
  if (rng() % 3 == 0) {
    const auto starts = frame_starts(seed);
    const std::size_t at = starts[rng() % starts.size()];
    char h[header_size];
    std::memcpy(h, seed.data() + at, header_size);
    const std::uint32_t real = decode_header(h);
    const std::uint32_t lies[] = {0,
                                  real - 1,
                                  real + 1,
                                  real + 4096,
                                  static_cast<std::uint32_t>(max_hello),
                                  static_cast<std::uint32_t>(max_hello + 1),
                                  64u << 10,
                                  (64u << 10) + 1,
                                  64u << 20,
                                  0xffffffffu,
                                  static_cast<std::uint32_t>(rng())};
    const std::uint32_t lie = lies[rng() % std::size(lies)];
    for (std::size_t i = 0; i < header_size && at + i < b.size(); ++i)
      b[at + i] = static_cast<std::byte>((lie >> (8 * i)) & 0xff);
  }
  if (rng() % 8 == 0) b.resize(rng() % (b.size() + 1));
  return b;
}

// A client-side raw connection: non-blocking sends, reads whatever the server answers.
class Conn {
 public:
  explicit Conn(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    ok_ = store_test::connect_loopback(fd_, port);
    ::fcntl(fd_, F_SETFL, O_NONBLOCK);
  }
  // Closes with a reset, so that thousands of connections leave no TIME_WAIT behind.
  ~Conn() {
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  bool ok() const { return ok_; }
  // Sends up to n more bytes of `data` (what the socket takes now).
  void send_some(std::size_t n) {
    n = std::min(n, data.size() - sent);
    const ssize_t k = ::send(fd_, data.data() + sent, n, MSG_NOSIGNAL);
    if (k > 0) sent += static_cast<std::size_t>(k);
    else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK) sent = data.size();  // reset
    drain(0);
  }
  bool done() const { return sent == data.size(); }
  // Reads replies for up to `ms`; false once the server closed the connection.
  bool drain(int ms) {
    const auto until = Clock::now() + std::chrono::milliseconds(ms);
    do {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, ms > 0 ? 1 : 0) <= 0) continue;
      char buf[4096];
      const ssize_t k = ::recv(fd_, buf, sizeof buf, 0);
      if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return false;
    } while (Clock::now() < until);
    return true;
  }
  std::string data;
  std::size_t sent = 0;

 private:
  int fd_;
  bool ok_ = false;
};

std::size_t open_fds() {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) (void)e, ++n;
  return n;
}

// The server's open connections drop back to `target` descriptors within `limit`.
std::size_t fds_after(std::size_t target, std::chrono::milliseconds limit) {
  const auto until = Clock::now() + limit;
  std::size_t now = open_fds();
  while (now > target && Clock::now() < until) {
    std::this_thread::sleep_for(20ms);
    now = open_fds();
  }
  return now;
}

long resident_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// One iteration: 1-4 mutated conversations, sent interleaved in random chunks; how many.
std::size_t run_iteration(std::uint16_t port, const std::vector<Bytes>& corpus,
                          const std::vector<const Bytes*>& others, std::mt19937_64& rng,
                          std::deque<std::unique_ptr<Conn>>& kept, bool verbose) {
  std::vector<std::unique_ptr<Conn>> conns;
  for (std::size_t n = 1 + rng() % 4; n > 0; --n) {
    const Bytes m = mutate(corpus[rng() % corpus.size()], others, rng);
    conns.push_back(std::make_unique<Conn>(port));
    conns.back()->data.assign(reinterpret_cast<const char*>(m.data()), m.size());
    if (verbose) std::printf("  %s\n", fuzz_support::hex(m).c_str());
  }
  if (verbose) std::fflush(stdout);
  for (bool pending = true; pending;) {
    pending = false;
    for (auto& c : conns) {
      if (c->done()) continue;
      c->send_some(rng() % 4 == 0 ? 1 + rng() % 8 : c->data.size());
      if (rng() % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
      pending = pending || !c->done();
    }
  }
  for (auto& c : conns) {
    c->drain(1);
    if (rng() % 16 != 0) continue;
    kept.push_back(std::move(c));  // left open: a parked wait, a half-sent message, idling
    if (kept.size() > 32) kept.pop_front();
  }
  return conns.size();
}

TEST(StoreFuzz, MutatedConversationsNeverCrashLeakOrStopTheServer) {
  std::vector<Bytes> corpus;
  for (const auto& [name, sample] : corpus_samples())
    corpus.push_back(fuzz_support::read_file(corpus_dir() / (name + ".bin")));
  std::vector<const Bytes*> others;
  for (const auto& b : corpus) others.push_back(&b);
  ASSERT_FALSE(corpus.empty());
  const auto seconds = static_cast<double>(env_or("DIST_FUZZ_SECONDS", 3));
  const std::uint64_t seed = env_or("DIST_FUZZ_SEED", 1);
  const bool verbose = env_or("DIST_FUZZ_VERBOSE", 0) == 1;
  const auto limits = server_limits();

  const long peak_before = fuzz_support::peak_kib(true);
  std::uint64_t iterations = 0, executions = 0, unanswered = 0;
  double elapsed = 0;
  {
    dist::core::TcpStoreServer server("127.0.0.1", 0, limits);
    auto o = store_test::options(false, server.port(), 5s);
    dist::core::TcpStore watcher(o);  // a well-behaved client throughout
    dist::core::TcpStore client(o);   // one that checks the store afterwards
    const std::size_t fds_before = open_fds();
    std::deque<std::unique_ptr<Conn>> kept;
    const auto start = Clock::now();
    while (Clock::now() - start < std::chrono::duration<double>(seconds)) {
      std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + iterations);
      if (verbose) std::printf("iteration %llu\n", static_cast<unsigned long long>(iterations));
      executions += run_iteration(server.port(), corpus, others, rng, kept, verbose);
      if (++iterations % 64 == 0) {
        try {
          watcher.add("fuzz/alive", 1);
        } catch (const std::exception& e) {
          if (++unanswered <= 3) ADD_FAILURE() << "iteration " << iterations << ": " << e.what();
        }
      }
    }
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    kept.clear();
    // Alive and correct: a client sets, gets, adds and waits.
    client.set("fuzz/after", dist::core::to_bytes("value"));
    EXPECT_EQ(dist::core::to_string(client.get("fuzz/after", 2s)), "value");
    EXPECT_EQ(client.add("fuzz/counter", 3), 3);
    client.wait({"fuzz/after"}, 1s);
    EXPECT_GT(server.rejected_connections(), 0u) << "no mutant was refused: the loop hardly ran";
    // Every fuzz connection is closed on our side: the server must let go of all of them (a
    // parked wait included) within its idle deadline and a margin.
    const std::size_t fds = fds_after(fds_before, 3s);
    EXPECT_LE(fds, fds_before) << "the server still holds connections the clients closed";
  }
  const long peak_growth = fuzz_support::peak_kib(false) - peak_before;
  std::printf(
      "store fuzz: %llu executions (mutated conversations, in %llu iterations) in %.1f s "
      "(%.0f/s), seed %llu, %zu corpus files, peak memory +%ld KiB, resident %ld KiB, "
      "crashes=0, unanswered=%llu\n",
      static_cast<unsigned long long>(executions), static_cast<unsigned long long>(iterations),
      elapsed, static_cast<double>(executions) / std::max(elapsed, 1e-9),
      static_cast<unsigned long long>(seed), corpus.size(), peak_growth, resident_kib(),
      static_cast<unsigned long long>(unanswered));
  RecordProperty("executions", std::to_string(executions));
  RecordProperty("seconds", std::to_string(elapsed));
  EXPECT_EQ(unanswered, 0u);
  EXPECT_GE(executions, 100u) << "the loop hardly ran";
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // At most 36 connections are open at once (4 in flight, 32 kept), each holding at most one
  // message (64 KiB) and a reply; the store holds at most max_total (1 MiB). 64 MiB is generous
  // and far below what an unbounded buffer or a leak per connection would cost.
  EXPECT_LT(peak_growth, 64L << 10) << "KiB of peak memory growth";
#endif
}

}  // namespace
