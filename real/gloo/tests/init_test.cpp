// init_process_group in this process: argument and environment errors (naming the variable),
// a one-process world over tcp://, file:// and a HashStore, double initialisation, destroy_dist,
// port in use.
#include "dist/real/init.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "core/store/tcp_store.hpp"
#include "dist/dist.hpp"
#include "dist/store.hpp"
#include "testing/ports.hpp"
#include "testing/processes.hpp"

namespace {

using namespace std::chrono_literals;

using test_support::ScopedEnv;

void expect_invalid_naming(const std::function<void()>& f, const std::string& needle,
                           bool distributed_before = false) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming " << needle;
  } catch (const dist::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  EXPECT_EQ(dist::is_distributed(), distributed_before);
}

TEST(InitProcessGroup, EnvMethodNamesEachMissingVariable) {
  ScopedEnv addr("MASTER_ADDR", std::nullopt), port("MASTER_PORT", std::nullopt),
      rank("RANK", std::nullopt), world("WORLD_SIZE", std::nullopt);
  const auto init = [] { dist::init_process_group(dist::Backend::gloo, "env://", -1, -1, 1s); };
  expect_invalid_naming(init, "MASTER_ADDR is not set");
  ScopedEnv a2("MASTER_ADDR", "127.0.0.1");
  expect_invalid_naming(init, "MASTER_PORT is not set");
  ScopedEnv p2("MASTER_PORT", "http");
  expect_invalid_naming(init, "MASTER_PORT='http' is not an integer");
  ScopedEnv p3("MASTER_PORT", std::to_string(test_support::free_port()));
  expect_invalid_naming(init, "RANK is not set");
  ScopedEnv r2("RANK", "0");
  expect_invalid_naming(init, "WORLD_SIZE is not set");
  ScopedEnv w2("WORLD_SIZE", "1");
  dist::init_process_group(dist::Backend::gloo, "env://", -1, -1, 5s);
  EXPECT_EQ(dist::get_world_size(), 1);
  dist::destroy_dist();
}

TEST(InitProcessGroup, BadArgumentsAreInvalid) {
  const auto init = [](std::string url, int rank, int world) {
    return [=] { dist::init_process_group(dist::Backend::gloo, url, rank, world, 1s); };
  };
  expect_invalid_naming(init("127.0.0.1:29500", 0, 1), "is not a URL");
  expect_invalid_naming(init("udp://127.0.0.1:1", 0, 1), "unsupported init_method scheme 'udp://'");
  expect_invalid_naming(init("tcp://127.0.0.1", 0, 1), "needs a host and a port");
  expect_invalid_naming(init("tcp://127.0.0.1:99999", 0, 1), "is not a port number");
  expect_invalid_naming(init("tcp://127.0.0.1:1234", -1, -1), "world_size must be given");
  expect_invalid_naming(init("tcp://127.0.0.1:1234", 2, 2), "rank must be in [0, 2)");
  expect_invalid_naming(init("tcp://127.0.0.1:1234?rank=x&world_size=2", -1, -1), "'rank=x'");
  expect_invalid_naming(init("file://relative/path", 0, 1), "needs an absolute path");
  expect_invalid_naming([] { dist::init_process_group(dist::Backend::sim, "tcp://127.0.0.1:1234", 0, 1, 1s); },
                        "dist::sim::run");
}

TEST(InitProcessGroup, OneProcessWorldOverTcpThenDestroy) {
  const std::string url = "tcp://127.0.0.1:" + std::to_string(test_support::free_port()) + "?rank=0&world_size=1";
  dist::init_process_group(dist::Backend::gloo, url, -1, -1, 5s);
  EXPECT_TRUE(dist::is_distributed());
  EXPECT_EQ(dist::get_backend(), dist::Backend::gloo);
  EXPECT_EQ(dist::get_dist_info(), std::make_pair(0, 1));
  std::vector<int> v{3};
  dist::all_reduce(v);
  EXPECT_EQ(v, std::vector<int>{3});
  expect_invalid_naming([] { dist::init_process_group(dist::Backend::gloo, "tcp://127.0.0.1:1", 0, 1, 1s); },
                        "already distributed", true);
  dist::destroy_dist();
  EXPECT_FALSE(dist::is_distributed());
  dist::destroy_dist();  // a no-op
}

TEST(InitProcessGroup, OneProcessWorldOverAFile) {
  char pattern[] = "/tmp/dist_init_test_XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  dist::init_process_group(dist::Backend::gloo, "file://" + dir + "/store", 0, 1, 5s);
  EXPECT_EQ(dist::get_world_size(), 1);
  dist::destroy_dist();
  EXPECT_FALSE(std::filesystem::exists(dir + "/store"));
  std::filesystem::remove_all(dir);
}

TEST(InitProcessGroup, OneProcessWorldThroughAHashStore) {
  auto store = std::make_shared<dist::HashStore>();
  dist::init_process_group(dist::Backend::gloo, store, 0, 1, 5s);
  EXPECT_EQ(dist::get_dist_info(), std::make_pair(0, 1));
  std::vector<int> v{4};
  dist::all_reduce(v);
  EXPECT_EQ(v, std::vector<int>{4});
  EXPECT_GT(store->num_keys(), 0);  // gloo's rendezvous keys are in the program's store
  dist::destroy_dist();
  EXPECT_FALSE(dist::is_distributed());
}

TEST(InitProcessGroup, BadStoreArgumentsAreInvalid) {
  const auto init = [](std::shared_ptr<dist::Store> store, int rank, int world,
                       std::chrono::milliseconds timeout = 1s) {
    return [=] { dist::init_process_group(dist::Backend::gloo, store, rank, world, timeout); };
  };
  const auto store = std::make_shared<dist::HashStore>();
  expect_invalid_naming(init(nullptr, 0, 1), "the store is null");
  expect_invalid_naming(init(store, 0, 0), "world_size must be given (>= 1) for a store, got 0");
  expect_invalid_naming(init(store, 2, 2), "rank must be in [0, 2) for a store, got 2");
  expect_invalid_naming(init(store, -1, 2), "rank must be in [0, 2) for a store, got -1");
  expect_invalid_naming(init(store, 0, 1, 0ms), "timeout must be positive, got 0 ms");
  EXPECT_EQ(store->num_keys(), 0);  // nothing was started
}

TEST(InitProcessGroup, PortInUseIsAClearError) {
  dist::core::TcpStoreOptions o;
  o.port = 0;
  o.is_server = true;
  dist::core::TcpStore holder(o);
  try {
    dist::init_process_group(dist::Backend::gloo, "tcp://127.0.0.1:" + std::to_string(holder.port()), 0, 2, 1s);
    ADD_FAILURE() << "initialised on a port in use";
  } catch (const dist::BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("port " + std::to_string(holder.port()) + " on 127.0.0.1 is already in use"),
              std::string::npos) << e.what();
  }
  EXPECT_FALSE(dist::is_distributed());
}

// destroy_dist closes the store and backends even while the user holds a Group: the next init
// binds the same port, and the old Group is refused, naming destroy_dist.
TEST(InitProcessGroup, AGroupKeptPastDestroyDistHoldsNoPort) {
  const std::string url = "tcp://127.0.0.1:" + std::to_string(test_support::free_port());
  dist::init_process_group(dist::Backend::gloo, url, 0, 1, 5s);
  const dist::Group kept = dist::new_group({0});
  const dist::Group world_copy = dist::new_group({0});
  dist::destroy_dist();
  EXPECT_FALSE(dist::is_distributed());
  dist::init_process_group(dist::Backend::gloo, url, 0, 1, 5s);  // threw "port in use" before
  std::vector<int> v{3};
  dist::all_reduce(v);
  EXPECT_EQ(v, std::vector<int>{3});
  try {
    dist::all_reduce(v, dist::ReduceOp::sum, kept);
    ADD_FAILURE() << "a Group of a destroyed world was used";
  } catch (const dist::NotInitialized& e) {
    EXPECT_NE(
        std::string(e.what()).find("all_reduce: the group's world was ended by destroy_dist()"),
        std::string::npos)
        << e.what();
  }
  dist::destroy_dist();
  EXPECT_THROW(dist::barrier(world_copy), dist::NotInitialized);
}

TEST(InitProcessGroup, ANonZeroRankWithNoStoreTimesOut) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(dist::init_process_group(dist::Backend::gloo,
                                        "tcp://127.0.0.1:" + std::to_string(test_support::free_port()), 1, 2, 300ms),
               dist::TimeoutError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

}  // namespace
