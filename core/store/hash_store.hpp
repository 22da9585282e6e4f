// HashStore (declared in <dist/store.hpp>): an in-memory Store for ranks that are threads of one
// process, under the name core has always used, and HashStoreImpl, its implementation.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>

#include "core/store/store.hpp"
#include "core/store/store_impl.hpp"

namespace dist::core {

using HashStore = dist::HashStore;

class HashStoreImpl final : public StoreImpl {
 public:
  void set(const std::string& key, const Bytes& value, std::chrono::milliseconds) override;
  Bytes get(const std::string& key, std::chrono::milliseconds timeout,
            std::chrono::milliseconds) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta, std::chrono::milliseconds) override;
  bool check(const std::vector<std::string>& keys, std::chrono::milliseconds) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired,
                    std::chrono::milliseconds) override;
  bool delete_key(const std::string& key, std::chrono::milliseconds) override;
  std::int64_t num_keys(std::chrono::milliseconds) override;

 private:
  std::vector<std::string> missing_locked(const std::vector<std::string>& keys) const;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Bytes, std::less<>> data_;
};

}  // namespace dist::core
