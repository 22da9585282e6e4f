// The Store contract, checked on every store (hash, file, tcp, prefix; store_harness.hpp):
// set/get/wait/add/check semantics, several handles on one store, deadlines that fire and name
// the missing keys.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/store/file_store.hpp"
#include "core/store/hash_store.hpp"
#include "core/store/tcp_store.hpp"
#include "core/store/tests/store_harness.hpp"
#include "dist/errors.hpp"

namespace {

using namespace std::chrono_literals;
using dist::core::Bytes;
using dist::core::Store;
using dist::core::to_bytes;
using Clock = std::chrono::steady_clock;
using store_test::StoreTest;

TEST_P(StoreTest, SetThenGetReturnsTheValueIncludingZeroBytes) {
  const Bytes value{'a', '\0', 'b', '\xff'};
  store_->set("key", value);
  EXPECT_EQ(store_->get("key", 1s), value);
  store_->set("key", to_bytes("second"));
  EXPECT_EQ(store_->get("key", 1s), to_bytes("second"));
  store_->set("empty", {});
  EXPECT_EQ(store_->get("empty", 1s), Bytes{});
}

TEST_P(StoreTest, AnotherHandleSeesTheValues) {
  auto other = harness_->open();
  store_->set("shared", to_bytes("x"));
  EXPECT_EQ(other->get("shared", 1s), to_bytes("x"));
  EXPECT_TRUE(other->check({"shared"}));
}

TEST_P(StoreTest, GetWaitsForAKeySetLater) {
  auto other = harness_->open();
  std::jthread setter([&] {
    std::this_thread::sleep_for(50ms);
    other->set("late", to_bytes("v"));
  });
  EXPECT_EQ(store_->get("late", 10s), to_bytes("v"));
}

TEST_P(StoreTest, WaitReturnsOnceEveryKeyIsSet) {
  auto other = harness_->open();
  std::jthread setter([&] {
    other->set("a", to_bytes("1"));
    std::this_thread::sleep_for(30ms);
    other->add("b", 1);
  });
  store_->wait({"a", "b"}, 10s);
  EXPECT_TRUE(store_->check({"a", "b"}));
  store_->wait({}, 0ms);  // nothing to wait for
}

TEST_P(StoreTest, WaitTimesOutNamingOnlyTheMissingKeys) {
  store_->set("present", to_bytes("1"));
  const auto start = Clock::now();
  try {
    store_->wait({"present", "absent"}, 150ms);
    FAIL() << "wait returned";
  } catch (const dist::TimeoutError& e) {
    const std::string what = e.what();  // a PrefixStore names the whole key: 'job/absent'
    EXPECT_NE(what.find("absent'"), std::string::npos) << what;
    EXPECT_EQ(what.find("present'"), std::string::npos) << what;
    EXPECT_NE(what.find("150 ms"), std::string::npos) << what;
  }
  const auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, 150ms);
  EXPECT_LT(elapsed, 3s);
}

// A wait on many keys names a few and counts the rest (20,000 keys made a 309 KB message).
TEST_P(StoreTest, AWaitOnManyKeysTimesOutWithAShortMessage) {
  std::vector<std::string> keys;
  for (int i = 0; i < 20'000; ++i) keys.push_back("key" + std::to_string(i));
  try {
    store_->wait(keys, 100ms);
    FAIL() << "wait returned";
  } catch (const dist::TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_LT(what.size(), 1000u) << what.substr(0, 2000);
    EXPECT_NE(what.find("key0'"), std::string::npos) << what;
    EXPECT_NE(what.find(" and 19992 more (20000 keys in all)"), std::string::npos) << what;
  }
}

TEST_P(StoreTest, GetTimesOutNamingTheKey) {
  try {
    store_->get("never", 50ms);
    FAIL() << "get returned";
  } catch (const dist::TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("never'"), std::string::npos) << e.what();
  }
}

TEST_P(StoreTest, DefaultTimeoutApplies) {
  store_->set_timeout(50ms);
  EXPECT_THROW(store_->get("never"), dist::TimeoutError);
  EXPECT_THROW(store_->wait({"never"}), dist::TimeoutError);
  EXPECT_THROW(store_->get("x", -1ms), dist::InvalidArgument);
}

TEST_P(StoreTest, AddCountsFromZeroAndStoresDecimalText) {
  EXPECT_EQ(store_->add("counter", 1), 1);
  EXPECT_EQ(store_->add("counter", 5), 6);
  EXPECT_EQ(store_->add("counter", -10), -4);
  EXPECT_EQ(store_->add("counter", 0), -4);
  EXPECT_EQ(store_->get("counter", 1s), to_bytes("-4"));
  store_->set("text", to_bytes("hello"));
  EXPECT_THROW(store_->add("text", 1), dist::BackendError);
}

TEST_P(StoreTest, ConcurrentAddsFromSeveralHandlesAreAtomic) {
  constexpr int threads = 4;
  constexpr int adds = 50;
  std::vector<std::shared_ptr<Store>> handles;
  for (int t = 0; t < threads; ++t) handles.push_back(harness_->open());
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        for (int i = 0; i < adds; ++i) handles[static_cast<std::size_t>(t)]->add("n", 1);
      });
  }
  EXPECT_EQ(store_->add("n", 0), threads * adds);
}

TEST_P(StoreTest, CheckDoesNotWait) {
  const auto start = Clock::now();
  EXPECT_FALSE(store_->check({"nothing"}));
  EXPECT_TRUE(store_->check({}));
  store_->set("k", {});
  EXPECT_TRUE(store_->check({"k"}));
  EXPECT_FALSE(store_->check({"k", "nothing"}));
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST_P(StoreTest, PrefixStoresDoNotSeeEachOthersKeys) {
  auto a = std::make_shared<dist::core::PrefixStore>("group1", store_);
  dist::core::PrefixStore b("group2", store_);
  a->set("0", to_bytes("a"));
  b.set("0", to_bytes("b"));
  EXPECT_EQ(a->get("0", 1s), to_bytes("a"));
  EXPECT_EQ(b.get("0", 1s), to_bytes("b"));
  EXPECT_EQ(store_->get("group1/0", 1s), to_bytes("a"));
  EXPECT_EQ(a->add("c", 2), 2);
  EXPECT_FALSE(b.check({"c"}));
  dist::core::PrefixStore nested("sub", a);
  nested.set("k", {});
  EXPECT_TRUE(store_->check({"group1/sub/k"}));
  EXPECT_THROW(b.wait({"c"}, 20ms), dist::TimeoutError);
}

INSTANTIATE_TEST_SUITE_P(AllStores, StoreTest, store_test::every_store(), store_test::harness_name);

TEST(HashStore, NoProcessHostsIt) {
  const dist::core::HashStore store;
  EXPECT_EQ(store.host_rank(), -1);
  EXPECT_FALSE(store.hosted_here());
}

TEST(FileStore, LastOfNumWorkersRemovesTheFile) {
  char pattern[] = "/tmp/dist_store_test_XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string path = dir + "/store";
  {
    auto a = std::make_unique<dist::core::FileStore>(path, 2);
    auto b = std::make_unique<dist::core::FileStore>(path, 2);
    a->set("k", to_bytes("v"));
    a.reset();
    EXPECT_TRUE(std::filesystem::exists(path));
    EXPECT_EQ(b->get("k", 1s), to_bytes("v"));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  // Two users of a world of one: the file goes with the last of them, as torch counts its users.
  {
    auto a = std::make_unique<dist::core::FileStore>(path, 1);
    auto b = std::make_unique<dist::core::FileStore>(path, 1);
    a->set("k", to_bytes("v"));
    a.reset();
    EXPECT_TRUE(std::filesystem::exists(path)) << "removed while a FileStore still uses it";
    EXPECT_EQ(b->get("k", 1s), to_bytes("v"));
    EXPECT_EQ(b->num_keys(), 1);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

// A file that is not a store's, or a sparse terabyte: a BackendError naming it, never bad_alloc.
TEST(FileStore, AHugeFileIsRefusedNotAllocated) {
  char pattern[] = "/tmp/dist_store_test_XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string path = dir + "/store";
  dist::core::FileStore store(path, 1);
  std::filesystem::resize_file(path, std::uintmax_t{1} << 40);
  try {
    store.get("k", 100ms);
    ADD_FAILURE() << "a 1 TiB store file was read";
  } catch (const dist::BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("unread bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(FileStore, UnopenablePathIsABackendError) {
  EXPECT_THROW(dist::core::FileStore("/nonexistent_dir_for_dist/x/store"), dist::BackendError);
}

}  // namespace
