// The stores the Store contract tests run on: a harness per kind whose open() returns a new
// handle on one underlying store (another FileStore on the same path, another TCP client, the
// same object for the in-memory store, a PrefixStore over a new client of a public TCPStore), and
// the parameterised fixture over them.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/store/file_store.hpp"
#include "core/store/hash_store.hpp"
#include "core/store/tcp_store.hpp"
#include "core/store/tests/store_options.hpp"
#include "dist/store.hpp"

namespace store_test {

class Harness {
 public:
  virtual ~Harness() = default;
  virtual std::shared_ptr<dist::Store> open() = 0;
};

class HashHarness final : public Harness {
 public:
  std::shared_ptr<dist::Store> open() override { return store_; }

 private:
  std::shared_ptr<dist::Store> store_ = std::make_shared<dist::HashStore>();
};

class FileHarness final : public Harness {
 public:
  FileHarness() {
    char pattern[] = "/tmp/dist_store_test_XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  ~FileHarness() override { std::filesystem::remove_all(dir_); }
  std::shared_ptr<dist::Store> open() override {
    return std::make_shared<dist::FileStore>(dir_ + "/store");
  }

 private:
  std::string dir_;
};

class TcpHarness final : public Harness {
 public:
  TcpHarness() : server_(std::make_shared<dist::core::TcpStore>(options(true, 0))) {}
  std::shared_ptr<dist::Store> open() override {
    return std::make_shared<dist::core::TcpStore>(options(false, server_->port()));
  }

 private:
  std::shared_ptr<dist::core::TcpStore> server_;
};

// Every handle is PrefixStore("job", a new client), over a master made by the public constructor.
class PrefixHarness final : public Harness {
 public:
  PrefixHarness() : master_(std::make_shared<dist::TCPStore>("127.0.0.1", 0, -1, true, timeout)) {}
  std::shared_ptr<dist::Store> open() override {
    auto client =
        std::make_shared<dist::TCPStore>("127.0.0.1", master_->port(), -1, false, timeout);
    return std::make_shared<dist::PrefixStore>("job", std::move(client));
  }
  // The store the prefixed handles share, unprefixed.
  const std::shared_ptr<dist::TCPStore>& base() const { return master_; }

 private:
  static constexpr std::chrono::seconds timeout{10};
  std::shared_ptr<dist::TCPStore> master_;
};

using Factory = std::function<std::unique_ptr<Harness>()>;
using Param = std::pair<const char*, Factory>;

class StoreTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    harness_ = GetParam().second();
    store_ = harness_->open();
  }
  std::unique_ptr<Harness> harness_;
  std::shared_ptr<dist::Store> store_;
};

inline auto every_store() {
  return ::testing::Values(Param{"hash", [] { return std::make_unique<HashHarness>(); }},
                           Param{"file", [] { return std::make_unique<FileHarness>(); }},
                           Param{"tcp", [] { return std::make_unique<TcpHarness>(); }},
                           Param{"prefix", [] { return std::make_unique<PrefixHarness>(); }});
}

inline std::string harness_name(const ::testing::TestParamInfo<Param>& info) {
  return info.param.first;
}

}  // namespace store_test
