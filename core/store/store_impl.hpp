// StoreImpl, what each of dist's own stores implements (hash_store, file_store, tcp_store,
// prefix_store): Store's do_* hooks and extras, which the public classes of <dist/store.hpp>
// forward to through detail::ImplementedStore (store_impl.cpp). Arguments arrive checked.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "dist/store.hpp"

namespace dist::core {

// Each hook is the Store hook of its name (do_set, do_get, ...), with its contract: wait, check
// and missing get non-empty key lists. A hook whose Store hook has no timeout gets
// `store_timeout`, the store's timeout() at the call: how long a store served by another process
// may take to answer it.
class StoreImpl {
 public:
  using Bytes = Store::Bytes;
  using HostReach = Store::HostReach;
  using RankContact = Store::RankContact;

  virtual ~StoreImpl() = default;

  virtual void set(const std::string& key, const Bytes& value,
                   std::chrono::milliseconds store_timeout) = 0;
  virtual Bytes get(const std::string& key, std::chrono::milliseconds timeout,
                    std::chrono::milliseconds store_timeout) = 0;
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  virtual std::int64_t add(const std::string& key, std::int64_t delta,
                           std::chrono::milliseconds store_timeout) = 0;
  virtual bool check(const std::vector<std::string>& keys,
                     std::chrono::milliseconds store_timeout) = 0;
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired,
                            std::chrono::milliseconds store_timeout) = 0;
  virtual bool delete_key(const std::string& key, std::chrono::milliseconds store_timeout) = 0;
  virtual std::int64_t num_keys(std::chrono::milliseconds store_timeout) = 0;
  // Defaults, as Store's: set (a store in this process answers at once) and one check per key.
  virtual void set_within(const std::string& key, const Bytes& value,
                          std::chrono::milliseconds timeout);
  virtual std::vector<std::string> missing(const std::vector<std::string>& keys,
                                           std::chrono::milliseconds timeout);

  // Store's extras; the defaults are Store's (no host: a store in this process).
  virtual int host_rank() const { return -1; }
  virtual bool hosted_here() const { return false; }
  virtual HostReach reach_host(std::chrono::milliseconds timeout) const;
  virtual std::vector<RankContact> contacts(const std::vector<int>& ranks,
                                            std::chrono::milliseconds timeout);
};

}  // namespace dist::core
