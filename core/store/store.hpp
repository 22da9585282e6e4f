// The store for rendezvous (c10d's Store): a small key-value interface ranks use to find each
// other (set, get, wait, add, check), with a deadline on every blocking call. Implementations:
// hash_store.hpp (threads of one process), file_store.hpp (a shared file), tcp_store.hpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dist/export.hpp"

namespace dist::core {

using Bytes = std::vector<char>;

DIST_API Bytes to_bytes(std::string_view text);
DIST_API std::string to_string(const Bytes& bytes);

// The interface. Public calls are non-virtual (they apply the default timeout and check keys);
// implementations override the do_* functions. A blocking call that passes its deadline raises
// dist::TimeoutError naming the missing key(s).
class DIST_API Store {
 public:
  static constexpr std::chrono::milliseconds default_timeout{std::chrono::minutes(5)};

  virtual ~Store() = default;

  void set(const std::string& key, const Bytes& value);
  // The value of `key`, waiting for it to be set.
  Bytes get(const std::string& key);
  Bytes get(const std::string& key, std::chrono::milliseconds timeout);
  // Waits until every key is set.
  void wait(const std::vector<std::string>& keys);
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  // Atomically adds `delta` to the integer stored at `key` (0 when unset; stored as decimal text,
  // as c10d does) and returns the new value.
  std::int64_t add(const std::string& key, std::int64_t delta);
  // Whether every key is set, without waiting for them.
  bool check(const std::vector<std::string>& keys);
  // Sets `key`, giving a store served by another process at most `timeout` to answer
  // (TimeoutError past it): for failure paths that must not wait the store's whole timeout.
  void set(const std::string& key, const Bytes& value, std::chrono::milliseconds timeout);
  // The keys of `keys` that are not set, in order, in a bounded number of requests however many
  // keys there are; TimeoutError when the store does not answer within `timeout`.
  std::vector<std::string> missing(const std::vector<std::string>& keys,
                                   std::chrono::milliseconds timeout);

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

  // For failure handling: the world rank whose process serves this store to the others (a
  // TcpStore's is rank 0; -1 when no process does, as with in-memory and file stores), and
  // whether that process is this one. When the host exits, the store goes with it.
  virtual int host_rank() const { return -1; }
  virtual bool hosted_here() const { return false; }

 protected:
  virtual void do_set(const std::string& key, const Bytes& value) = 0;
  virtual Bytes do_get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  virtual void do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  virtual std::int64_t do_add(const std::string& key, std::int64_t delta) = 0;
  virtual bool do_check(const std::vector<std::string>& keys) = 0;
  // Defaults: do_set (stores in this process answer at once) and one check per key.
  virtual void do_set_within(const std::string& key, const Bytes& value,
                             std::chrono::milliseconds timeout);
  virtual std::vector<std::string> do_missing(const std::vector<std::string>& keys,
                                              std::chrono::milliseconds timeout);

 private:
  std::chrono::milliseconds timeout_ = default_timeout;
};

// A view of another store that prefixes every key with "<prefix>/" (c10d's PrefixStore), so
// several groups can rendezvous through one store without their keys colliding.
class DIST_API PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> base);
  const std::shared_ptr<Store>& base() const { return base_; }
  int host_rank() const override { return base_->host_rank(); }
  bool hosted_here() const override { return base_->hosted_here(); }

 protected:
  void do_set(const std::string& key, const Bytes& value) override;
  Bytes do_get(const std::string& key, std::chrono::milliseconds timeout) override;
  void do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::int64_t do_add(const std::string& key, std::int64_t delta) override;
  bool do_check(const std::vector<std::string>& keys) override;
  void do_set_within(const std::string& key, const Bytes& value,
                     std::chrono::milliseconds timeout) override;
  std::vector<std::string> do_missing(const std::vector<std::string>& keys,
                                      std::chrono::milliseconds timeout) override;

 private:
  std::string key_of(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> keys_of(const std::vector<std::string>& keys) const;

  std::string prefix_;
  std::shared_ptr<Store> base_;
};

// Helpers for implementations.
namespace store_detail {
// The TimeoutError a store raises: "<store>: timed out after N ms waiting for key(s) 'a', 'b'".
[[noreturn]] void throw_timeout(std::string_view store, std::chrono::milliseconds timeout,
                                const std::vector<std::string>& missing);
// Parses the decimal counter text stored by add (empty: 0); BackendError when it is not one.
std::int64_t parse_counter(std::string_view store, const std::string& key, const Bytes& value);
Bytes format_counter(std::int64_t value);
}  // namespace store_detail

}  // namespace dist::core
