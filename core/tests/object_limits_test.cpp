// The object decoder's bounds on what a peer's bytes can make the receiving rank spend: every
// length prefix is checked against the bytes left times the bytes one element needs, containers
// grow only as their elements really decode (the receiver's peak memory is measured, in a child
// process), and values nest at most ObjectInputArchive::max_depth levels (InvalidArgument, never
// a stack overflow).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cereal/types/forward_list.hpp>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstring>
#include <deque>
#include <forward_list>
#include <fstream>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <typeinfo>
#include <unordered_set>
#include <variant>
#include <vector>

#include "core/tests/helpers_util.hpp"
#include "core/tests/object_test_types.hpp"
#include "dist/dist.hpp"
#include "dist/sim/run.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DIST_TEST_SANITIZED 1
#else
#define DIST_TEST_SANITIZED 0
#endif
#if defined(__SANITIZE_THREAD__)
#define DIST_TEST_TSAN 1
#else
#define DIST_TEST_TSAN 0
#endif

namespace {

using dist::detail::ObjectInputArchive;
using helpers_test::world;
using object_test::Cell;
using object_test::decode_error;
using object_test::Node;
using ::testing::HasSubstr;

using Page = std::array<double, 1024>;  // 8 KiB in memory and on the wire
using Quad = std::array<double, 4>;
using BigValueMap = std::map<int, std::array<char, 100>>;

std::vector<std::byte> u64_bytes(std::uint64_t v) {
  std::vector<std::byte> out;
  object_test::put_u64(out, v);
  return out;
}

// How a forked child ended: what it printed to the pipe, and whether it exited with status 0.
struct ChildEnd {
  std::string text;
  bool clean = false;
  std::string how;  // "exit 0", "exit 3", "signal 11"
};

// Runs `body` in a forked child (so a crash or a huge allocation ends the child, not the test
// binary) and returns what it wrote. The child starts no threads before `body` does.
ChildEnd in_child(const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return {"pipe failed", false, "none"};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string text;
    try {
      text = body();
    } catch (const std::exception& e) {
      text = std::string("exception: ") + e.what();
    }
    for (std::size_t at = 0; at < text.size();) {
      const auto n = write(fds[1], text.data() + at, text.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  ChildEnd end;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) end.text.append(buf, buf + n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  end.clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  end.how = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                              : "signal " + std::to_string(WTERMSIG(status));
  return end;
}

// A field of /proc/self/status in KiB ("VmHWM:", "VmRSS:", "VmSize:"), or -1.
long status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
  return -1;
}

// In a child process: the growth of the peak resident memory (KiB) while `body` runs, and the
// text `body` returns ("<peak KiB> <text>"). The peak is reset first (clear_refs 5, Linux >= 4.0)
// so the child's own start-up does not count. Outside the sanitizers, the child's address space
// is also capped 2 GiB above its size, so a decoder that does amplify fails fast with bad_alloc
// instead of taking the machine's memory.
ChildEnd peak_growth_kib(const std::function<std::string()>& body) {
  return in_child([&] {
    if (!DIST_TEST_SANITIZED) {
      const auto cap = static_cast<rlim_t>(status_kib("VmSize:") + (2l << 20)) * 1024;
      const rlimit limit{cap, cap};
      setrlimit(RLIMIT_AS, &limit);
    }
    { std::ofstream("/proc/self/clear_refs") << "5"; }
    const long before = status_kib("VmRSS:");
    const std::string text = body();
    return std::to_string(status_kib("VmHWM:") - before) + " " + text;
  });
}

long peak_of(const ChildEnd& end) { return std::stol(end.text); }

// What a child run may add to the peak besides the decoding itself (a sim world's threads and
// buffers, page-granular accounting; more under ASan, whose allocator keeps freed memory).
constexpr long slack_kib = DIST_TEST_SANITIZED ? 48 << 10 : 16 << 10;

// A user struct: the decoder cannot see what serialize() writes, so it counts one byte.
struct UserInt {
  int x = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(x);
  }
};
struct Empty {};  // no serialize(): cereal writes nothing for it

// T's smallest value encodes to exactly min_encoded_bytes<T>() bytes.
template <class T>
void expect_smallest(const T& smallest, std::size_t bytes) {
  EXPECT_EQ(dist::detail::min_encoded_bytes<T>(), bytes) << typeid(T).name();
  EXPECT_EQ(dist::detail::to_bytes(smallest).size(), bytes) << typeid(T).name();
}

TEST(ObjectLimits, MinEncodedBytesAreTheSmallestEncodings) {
  enum class Small : std::uint8_t { a };
  expect_smallest(std::int32_t{}, 4);
  expect_smallest(double{}, 8);
  expect_smallest(bool{}, 1);
  expect_smallest(Small::a, 1);
  expect_smallest(std::string{}, 8);
  expect_smallest(std::u16string{}, 8);
  expect_smallest(std::vector<Page>{}, 8);
  expect_smallest(std::map<int, int>{}, 8);
  expect_smallest(std::unordered_set<int>{}, 8);
  expect_smallest(std::deque<int>{}, 8);
  expect_smallest(std::list<int>{}, 8);
  expect_smallest(std::forward_list<int>{}, 8);
  expect_smallest(std::multiset<int>{}, 8);
  expect_smallest(std::array<std::int16_t, 3>{}, 6);
  expect_smallest(std::array<std::string, 2>{}, 16);
  expect_smallest(std::optional<Page>{}, 1);
  expect_smallest(std::unique_ptr<int>{}, 1);
  expect_smallest(std::shared_ptr<int>{}, 4);
  expect_smallest(std::pair<int, double>{}, 12);
  expect_smallest(std::tuple<int, std::string, std::monostate>{}, 12);
  expect_smallest(std::tuple<>{}, 0);
  expect_smallest(std::variant<std::monostate, Page>{}, 4);
  expect_smallest(std::variant<double, std::string>{std::string()}, 12);
  expect_smallest(std::monostate{}, 0);
  expect_smallest(Empty{}, 0);
  expect_smallest(std::complex<float>{}, 8);
  expect_smallest(std::chrono::milliseconds{}, 8);
  // A user struct counts as one byte, a lower bound of what it writes.
  EXPECT_EQ(dist::detail::min_encoded_bytes<UserInt>(), 1u);
  EXPECT_EQ(dist::detail::to_bytes(UserInt{}).size(), 4u);
}

TEST(ObjectLimits, LengthsAreCheckedAgainstTheBytesEachElementNeeds) {
  // 65536 elements of 8 KiB from 8 bytes: the old allowance let this through (512 MiB).
  EXPECT_THAT(decode_error<std::vector<Page>>(u64_bytes(65536)),
              HasSubstr("(8 bytes): corrupt length 65536"));
  // A length that fits the bytes left exactly decodes; one more element does not.
  auto two = u64_bytes(2);
  two.resize(8 + 2 * 4 * sizeof(double));
  EXPECT_EQ(dist::detail::from_bytes<std::vector<Quad>>(two, "test", 0).size(), 2u);
  auto three = two;
  three[0] = std::byte{3};
  EXPECT_THAT(decode_error<std::vector<Quad>>(three), HasSubstr("corrupt length 3"));
  // Strings need their own 8-byte length each; a map entry needs its key and its value.
  auto strings = u64_bytes(3);
  strings.resize(8 + 2 * 8);
  EXPECT_THAT(decode_error<std::vector<std::string>>(strings), HasSubstr("corrupt length 3"));
  auto entries = u64_bytes(2);
  entries.resize(8 + 4 + 100);
  EXPECT_THAT(decode_error<BigValueMap>(entries), HasSubstr("corrupt length 2"));
  // The same bytes as a map of ints are two entries of 8 bytes: they decode.
  entries.resize(8 + 2 * 8);
  EXPECT_EQ((dist::detail::from_bytes<std::map<int, int>>(entries, "test", 0).size()), 1u);
}

TEST(ObjectLimits, ElementsThatTakeNoBytesHaveOneAllowancePerObject) {
  // Small containers of std::monostate still decode, even at the end of a message...
  const std::vector<std::monostate> empties(10);
  EXPECT_EQ(dist::detail::from_bytes<std::vector<std::monostate>>(dist::detail::to_bytes(empties),
                                                                  "test", 0),
            empties);
  // ...but the allowance is for the whole object, not for each container: otherwise every 8-byte
  // length in a message could ask for another 64 Ki of them (a 1 MiB message, 8 Gi elements).
  std::vector<std::byte> bytes = u64_bytes(3);
  for (int i = 0; i < 3; ++i) object_test::put_u64(bytes, 40000);
  EXPECT_THAT(decode_error<std::vector<std::vector<std::monostate>>>(bytes),
              HasSubstr("corrupt length 40000 at offset 16"));
}

TEST(ObjectLimits, ReceiverPeakMemoryStaysNearTheMessageSize) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer's shadow memory hides the decoder's; ASan and plain builds "
                  "measure it";
#endif
  // The case: rank 0 broadcasts an 8-byte object that rank 1 reads as a vector of 8 KiB
  // arrays. Before the fix rank 1 went from 8 MB to 533 MB.
  const auto eight = peak_growth_kib([] {
    try {
      dist::sim::run(world(2), [] {
        std::vector<std::uint64_t> sent{65536};
        std::vector<std::vector<Page>> received(1);
        if (dist::get_rank() == 0) dist::broadcast_object_list(sent, 0);
        else dist::broadcast_object_list(received, 0);
      });
    } catch (const dist::sim::RunError& e) {
      return helpers_test::message_of(e, 1);
    }
    return std::string("no error");
  });
  ASSERT_TRUE(eight.clean) << eight.how << ": " << eight.text;
  EXPECT_THAT(eight.text, HasSubstr("(8 bytes): corrupt length 65536"));
  EXPECT_LT(peak_of(eight), slack_kib) << eight.text;

  // A 1 MiB message whose length asks for a million 8 KiB arrays (8 GiB before the fix).
  constexpr std::size_t mib = 1 << 20;
  auto message = u64_bytes(mib - 8);
  message.resize(mib, std::byte{1});
  const auto pages = peak_growth_kib([&] { return decode_error<std::vector<Page>>(message); });
  ASSERT_TRUE(pages.clean) << pages.how << ": " << pages.text;
  EXPECT_THAT(pages.text, HasSubstr("corrupt length 1048568"));
  EXPECT_LT(peak_of(pages), slack_kib + 4 * (mib >> 10)) << pages.text;

  // The same length read as optional pages, each present (flag byte 0: not "nullopt"): a
  // one-byte flag per element passes the length check, so only decoding element by element keeps
  // the memory near what really decoded (a present page takes 8 KiB of the message; 127 fit).
  std::fill(message.begin() + 8, message.end(), std::byte{0});
  const auto optionals =
      peak_growth_kib([&] { return decode_error<std::vector<std::optional<Page>>>(message); });
  ASSERT_TRUE(optionals.clean) << optionals.how << ": " << optionals.text;
  EXPECT_THAT(optionals.text, HasSubstr("truncated data"));
  EXPECT_LT(peak_of(optionals), slack_kib + 4 * (mib >> 10)) << optionals.text;
  std::printf(
      "decoder peak memory growth: %ld KiB (8-byte message, sim receiver), %ld KiB "
      "(1 MiB as pages), %ld KiB (1 MiB as optional pages)\n",
      peak_of(eight), peak_of(pages), peak_of(optionals));
}

TEST(ObjectLimits, NestingDeeperThanTheLimitIsInvalidArgumentNotAStackOverflow) {
  // The case: a tree 150k levels deep (1.8 MB) overflowed the stack (SIGSEGV). In a child
  // process, so that a crash fails this test instead of ending the test binary.
  const auto deep = in_child([] {
    return decode_error<Node>(object_test::node_chain_bytes(150000)) + "\n" +
           decode_error<Cell>(object_test::cell_list_bytes(150000));
  });
  ASSERT_TRUE(deep.clean) << deep.how << " (a stack overflow?): " << deep.text;
  EXPECT_THAT(deep.text, HasSubstr("test: cannot deserialize the object from rank 1 (1800000 "
                                   "bytes): values nested more than 1024 levels deep"));
  EXPECT_THAT(deep.text, HasSubstr("(750000 bytes): values nested more than 1024 levels deep"));
}

TEST(ObjectLimits, DepthLimitCountsEveryValueAndFitsASmallStack) {
  static_assert(ObjectInputArchive::max_depth == 1024);
  // A chain of Nodes takes two levels a generation (the Node, then its vector of children, which
  // holds the next Node; the deepest Node's int and empty vector are one level below it).
  const std::size_t generations = ObjectInputArchive::max_depth / 2;
  const auto at_limit = dist::detail::to_bytes(object_test::node_chain(generations));
  EXPECT_EQ(at_limit, object_test::node_chain_bytes(generations));
  // The encoder has no limit: a sender may write what the receiver then refuses.
  const auto over = dist::detail::to_bytes(object_test::node_chain(generations + 1));
  EXPECT_THAT(decode_error<Node>(over), HasSubstr("values nested more than 1024 levels deep at "
                                                  "offset 6144 (the decoder's limit)"));
  // A JSON-like value takes three levels a generation (the struct, its variant, the list).
  auto json_chain = [](std::size_t levels) {
    std::vector<std::byte> out;
    for (std::size_t i = 0; i < levels; ++i) {
      object_test::put_i32(out, 3);  // the std::vector<Json> alternative
      object_test::put_u64(out, i + 1 < levels ? 1 : 0);
    }
    return out;
  };
  EXPECT_THAT(decode_error<object_test::Json>(json_chain(342)),
              HasSubstr("values nested more than 1024 levels deep"));
  // At the limit, every shape decodes in 1 MiB of stack on a rank thread (a few hundred KiB are
  // used at -O0 under ASan, less than 100 KiB at -O2). ThreadSanitizer keeps about 0.8 MiB of its
  // state in each thread's TLS, which glibc takes from the thread's stack.
  constexpr std::size_t tls = DIST_TEST_TSAN ? std::size_t{1} << 20 : 0;
  const dist::sim::Cluster one_rank{
      .nodes = 1, .ranks_per_node = 1, .stack_size = (std::size_t{1} << 20) + tls};
  const auto sizes = dist::sim::run(one_rank, [&] {
    const auto node = dist::detail::from_bytes<Node>(at_limit, "test", 0);
    const auto json = dist::detail::from_bytes<object_test::Json>(json_chain(341), "test", 0);
    const auto cell = dist::detail::from_bytes<Cell>(object_test::cell_list_bytes(512), "test", 0);
    return node.kids.size() + (json.v.index() == 3 ? 1u : 0u) + (cell.next ? 1u : 0u);
  });
  EXPECT_EQ(sizes, std::vector<std::size_t>{3});
  EXPECT_EQ(dist::detail::from_bytes<Node>(at_limit, "test", 0),
            object_test::node_chain(generations));
}

}  // namespace
