// The public store calls beyond set/get/wait/add/check, on every store (hash, file, tcp, a prefix
// over a public TCPStore): compare_set (c10d's rules, atomic across handles, waking waiters),
// delete_key, num_keys, string values; then what is particular to one kind: a PrefixStore's view
// of its base, deletions in a FileStore's log, the public TCPStore constructor (its checks and its
// wait for workers), and the TCP server's quota after a deletion.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/store/tests/store_harness.hpp"
#include "dist/errors.hpp"
#include "dist/store.hpp"
#include "testing/ports.hpp"

namespace {

using namespace std::chrono_literals;
using Bytes = dist::Store::Bytes;
using Clock = std::chrono::steady_clock;

class StoreApiTest : public store_test::StoreTest {};

TEST_P(StoreApiTest, CompareSetSwapsOnlyOnAMatch) {
  // Unset key, empty expected: stored, and the desired value returned.
  EXPECT_EQ(store_->compare_set("k", "", "first"), "first");
  EXPECT_EQ(store_->get_string("k", 1s), "first");
  // A mismatch changes nothing and returns the current value.
  EXPECT_EQ(store_->compare_set("k", "wrong", "second"), "first");
  EXPECT_EQ(store_->compare_set("k", "", "second"), "first");
  EXPECT_EQ(store_->get_string("k", 1s), "first");
  // A match swaps.
  EXPECT_EQ(store_->compare_set("k", "first", "second"), "second");
  EXPECT_EQ(store_->get_string("k", 1s), "second");
  // Unset key, non-empty expected: nothing stored, `expected` returned (c10d's answer).
  EXPECT_EQ(store_->compare_set("absent", "x", "y"), "x");
  EXPECT_FALSE(store_->check({"absent"}));
  // A set empty value matches an empty expected; bytes (zeros included) compare exactly.
  store_->set("empty", Bytes{});
  EXPECT_EQ(store_->compare_set("empty", "", "z"), "z");
  const Bytes zeros{'a', '\0', 'b'};
  EXPECT_EQ(store_->compare_set("bytes", Bytes{}, zeros), zeros);
  EXPECT_EQ(store_->compare_set("bytes", Bytes{'a', '\0', 'c'}, Bytes{'n'}), zeros);
  EXPECT_EQ(store_->compare_set("bytes", zeros, Bytes{'n'}), Bytes{'n'});
}

TEST_P(StoreApiTest, CompareSetIsAtomicAcrossHandles) {
  constexpr int contenders = 6;
  std::vector<std::shared_ptr<dist::Store>> handles;
  for (int t = 0; t < contenders; ++t) handles.push_back(harness_->open());
  std::vector<std::string> seen(contenders);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < contenders; ++t)
      threads.emplace_back([&, t] {
        const auto i = static_cast<std::size_t>(t);
        seen[i] = handles[i]->compare_set("leader", "", "rank" + std::to_string(t));
      });
  }
  const std::string leader = store_->get_string("leader", 1s);
  int winners = 0;
  for (int t = 0; t < contenders; ++t) {
    EXPECT_EQ(seen[static_cast<std::size_t>(t)], leader) << "contender " << t;
    if (leader == "rank" + std::to_string(t)) ++winners;
  }
  EXPECT_EQ(winners, 1) << leader;
}

TEST_P(StoreApiTest, CompareSetWakesAWaiter) {
  auto other = harness_->open();
  std::jthread setter([&] {
    std::this_thread::sleep_for(50ms);
    other->compare_set("late", "", "v");
  });
  EXPECT_EQ(store_->get_string("late", 10s), "v");
}

TEST_P(StoreApiTest, DeleteKeyRemovesOnlyThatKey) {
  auto other = harness_->open();
  store_->set("a", "1");
  store_->set("b", "2");
  EXPECT_TRUE(store_->delete_key("a"));
  EXPECT_FALSE(store_->delete_key("a"));
  EXPECT_FALSE(other->delete_key("never set"));
  EXPECT_FALSE(other->check({"a"}));
  EXPECT_TRUE(other->check({"b"}));
  EXPECT_THROW(other->get("a", 50ms), dist::TimeoutError);
  EXPECT_EQ(other->compare_set("a", "1", "x"), "1");  // gone: nothing to match
  EXPECT_FALSE(store_->check({"a"}));
  store_->add("counter", 5);
  EXPECT_TRUE(other->delete_key("counter"));
  EXPECT_EQ(store_->add("counter", 1), 1);  // a deleted counter starts again from 0
  std::jthread setter([&] {
    std::this_thread::sleep_for(50ms);
    other->set("a", "again");
  });
  EXPECT_EQ(store_->get_string("a", 10s), "again");  // a get after a deletion waits for a new set
}

TEST_P(StoreApiTest, NumKeysCountsTheKeysSet) {
  auto other = harness_->open();
  EXPECT_EQ(store_->num_keys(), 0);
  store_->set("a", "1");
  store_->add("n", 1);
  store_->compare_set("c", "", "x");
  store_->compare_set("d", "x", "y");  // unset and expected non-empty: not stored
  EXPECT_EQ(store_->num_keys(), 3);
  store_->set("a", "replaced");
  EXPECT_EQ(other->num_keys(), 3);
  EXPECT_TRUE(other->delete_key("n"));
  EXPECT_EQ(store_->num_keys(), 2);
}

TEST_P(StoreApiTest, StringValuesAreTheirBytes) {
  store_->set("literal", "text");
  store_->set("string", std::string("a\0b", 3));
  store_->set("view", std::string_view("view"));
  EXPECT_EQ(store_->get("literal", 1s), (Bytes{'t', 'e', 'x', 't'}));
  EXPECT_EQ(store_->get_string("string", 1s), std::string("a\0b", 3));
  store_->set_timeout(1s);
  EXPECT_EQ(store_->get_string("view"), "view");
}

INSTANTIATE_TEST_SUITE_P(AllStores, StoreApiTest, store_test::every_store(),
                         store_test::harness_name);

TEST(PrefixStore, WorksOnItsOwnKeysAndCountsTheBase) {
  auto base = std::make_shared<dist::HashStore>();
  dist::PrefixStore a("a", base), b("b", base);
  base->set("plain", "0");
  a.set("k", "from a");
  b.set("k", "from b");
  EXPECT_EQ(a.compare_set("k", "from a", "swapped"), "swapped");
  EXPECT_EQ(b.get_string("k", 1s), "from b");
  EXPECT_EQ(base->get_string("a/k", 1s), "swapped");
  EXPECT_EQ(a.num_keys(), 3);  // the base's count, as c10d's PrefixStore
  EXPECT_TRUE(b.delete_key("k"));
  EXPECT_TRUE(a.check({"k"}));
  EXPECT_FALSE(base->check({"b/k"}));
  EXPECT_FALSE(a.delete_key("plain"));  // a's "plain" is "a/plain"
  EXPECT_EQ(base->num_keys(), 2);
  EXPECT_THROW(dist::PrefixStore("p", nullptr), dist::InvalidArgument);
}

std::string temp_dir() {
  char pattern[] = "/tmp/dist_store_api_test_XXXXXX";
  return ::mkdtemp(pattern);
}

TEST(FileStore, ADeletionIsInTheLogForHandlesOpenedLater) {
  const std::string dir = temp_dir();
  {
    dist::FileStore first(dir + "/store");
    first.set("kept", "1");
    first.set("gone", "2");
    EXPECT_TRUE(first.delete_key("gone"));
    first.set("back", "3");
    first.delete_key("back");
    first.set("back", "4");
    dist::FileStore later(dir + "/store");  // replays the whole log
    EXPECT_FALSE(later.check({"gone"}));
    EXPECT_EQ(later.get_string("back", 1s), "4");
    EXPECT_EQ(later.num_keys(), 2);
  }
  EXPECT_THROW(dist::FileStore(dir + "/x", 0), dist::InvalidArgument);
  EXPECT_THROW(dist::FileStore(dir + "/x", -2), dist::InvalidArgument);
  std::filesystem::remove_all(dir);
}

TEST(FileStore, TheCleanupCounterIsNotAKey) {
  const std::string dir = temp_dir();
  auto a = std::make_unique<dist::FileStore>(dir + "/store", 2);
  dist::FileStore b(dir + "/store", 2);
  b.set("k", "v");
  a.reset();  // the first of two: counts itself in the file, which stays
  EXPECT_EQ(b.num_keys(), 1);
  std::filesystem::remove_all(dir);
}

TEST(TCPStore, PublicConstructorChecksItsArguments) {
  const auto invalid = [](auto&& make, const std::string& needle) {
    try {
      make();
      ADD_FAILURE() << "no error; expected one naming " << needle;
    } catch (const dist::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  invalid([] { dist::TCPStore("127.0.0.1", -1, 1, true); }, "port -1");
  invalid([] { dist::TCPStore("127.0.0.1", 70000, 1, true); }, "port 70000");
  invalid([] { dist::TCPStore("127.0.0.1", 0, 1, false); }, "port 0");
  invalid([] { dist::TCPStore("127.0.0.1", 0, 0, true); }, "got 0");
  invalid([] { dist::TCPStore("127.0.0.1", 0, -2, true); }, "got -2");
  invalid([] { dist::TCPStore("127.0.0.1", 0, 1, true, 0ms); }, "timeout must be positive");
}

TEST(TCPStore, TheMasterWaitsUntilWorldSizeStoresConnected) {
  const auto start = Clock::now();
  const dist::TCPStore alone("127.0.0.1", 0, 1, true, 5s);  // it counts itself: no wait
  EXPECT_LT(Clock::now() - start, 2s);

  const int port = test_support::free_port();
  std::atomic<bool> constructed{false};
  std::jthread master([&] {
    dist::TCPStore m("127.0.0.1", port, 3, true, 10s);
    constructed = true;
    m.set("master", "up");
    m.wait({"bye"}, 10s);  // the server lives as long as this object
  });
  dist::TCPStore first("127.0.0.1", port, 3, false, 10s);
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(constructed) << "the master returned with 2 of 3 stores connected";
  dist::TCPStore second("127.0.0.1", port, 3, false, 10s);
  EXPECT_EQ(second.get_string("master", 10s), "up");
  EXPECT_TRUE(constructed);
  first.set("bye", "");
}

TEST(TCPStore, AMasterWhoseWorkersNeverComeTimesOut) {
  const auto start = Clock::now();
  try {
    dist::TCPStore("127.0.0.1", 0, 2, true, 300ms);
    ADD_FAILURE() << "the master returned without its worker";
  } catch (const dist::TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("1 of 2 store clients"), std::string::npos) << e.what();
  }
  EXPECT_GE(Clock::now() - start, 300ms);
  EXPECT_LT(Clock::now() - start, 3s);
}

TEST(TCPStore, CompareSetAndDeleteKeyKeepTheServersLimits) {
  auto o = store_test::options(true, 0);
  o.max_value = 1000;
  o.max_total = 5000;
  dist::core::TcpStore store(o);
  EXPECT_THROW(store.compare_set("k", Bytes{}, Bytes(1001, 'x')), dist::InvalidArgument);
  dist::core::TcpStore lax(store_test::options(false, store.port()));  // default limits
  EXPECT_THROW(lax.compare_set("k", Bytes{}, Bytes(1001, 'x')), dist::BackendError);
  EXPECT_FALSE(lax.check({"k"}));
  for (int i = 0; i < 4; ++i) store.set("k" + std::to_string(i), Bytes(1000, 'x'));
  EXPECT_THROW(store.compare_set("k4", Bytes{}, Bytes(1000, 'x')), dist::BackendError);  // quota
  EXPECT_TRUE(store.delete_key("k0"));  // gives its bytes back
  EXPECT_EQ(store.compare_set("k4", Bytes{}, Bytes(1000, 'y')), Bytes(1000, 'y'));
  EXPECT_EQ(store.num_keys(), 4);
}

}  // namespace
