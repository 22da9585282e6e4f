// HashStore: a map under a mutex; waiters sleep on a condition variable notified by set/add.
#include "core/store/hash_store.hpp"

namespace dist::core {

void HashStore::do_set(const std::string& key, const Bytes& value) {
  {
    std::lock_guard lock(mutex_);
    data_[key] = value;
  }
  changed_.notify_all();
}

std::vector<std::string> HashStore::missing_locked(const std::vector<std::string>& keys) const {
  std::vector<std::string> missing;
  for (const auto& k : keys)
    if (!data_.contains(k)) missing.push_back(k);
  return missing;
}

void HashStore::do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const bool ready = changed_.wait_for(lock, timeout, [&] { return missing_locked(keys).empty(); });
  if (!ready) store_detail::throw_timeout("HashStore", timeout, missing_locked(keys));
}

Bytes HashStore::do_get(const std::string& key, std::chrono::milliseconds timeout) {
  do_wait({key}, timeout);
  std::lock_guard lock(mutex_);
  return data_.at(key);
}

std::int64_t HashStore::do_add(const std::string& key, std::int64_t delta) {
  std::int64_t value = 0;
  {
    std::lock_guard lock(mutex_);
    Bytes& slot = data_[key];
    value = static_cast<std::int64_t>(static_cast<std::uint64_t>(
                                          store_detail::parse_counter("HashStore", key, slot)) +
                                      static_cast<std::uint64_t>(delta));
    slot = store_detail::format_counter(value);
  }
  changed_.notify_all();
  return value;
}

bool HashStore::do_check(const std::vector<std::string>& keys) {
  std::lock_guard lock(mutex_);
  return missing_locked(keys).empty();
}

}  // namespace dist::core
