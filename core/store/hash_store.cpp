// HashStore: a map under a mutex; waiters sleep on a condition variable notified by every change.
#include "core/store/hash_store.hpp"

namespace dist {

namespace core {

void HashStoreImpl::set(const std::string& key, const Bytes& value, std::chrono::milliseconds) {
  {
    std::lock_guard lock(mutex_);
    data_[key] = value;
  }
  changed_.notify_all();
}

std::vector<std::string> HashStoreImpl::missing_locked(const std::vector<std::string>& keys) const {
  std::vector<std::string> missing;
  for (const auto& k : keys)
    if (!data_.contains(k)) missing.push_back(k);
  return missing;
}

void HashStoreImpl::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const bool ready = changed_.wait_for(lock, timeout, [&] { return missing_locked(keys).empty(); });
  if (!ready) store_detail::throw_timeout("HashStore", timeout, missing_locked(keys));
}

Bytes HashStoreImpl::get(const std::string& key, std::chrono::milliseconds timeout,
                         std::chrono::milliseconds) {
  std::unique_lock lock(mutex_);
  const bool ready = changed_.wait_for(lock, timeout, [&] { return data_.contains(key); });
  if (!ready) store_detail::throw_timeout("HashStore", timeout, {key});
  return data_.at(key);
}

std::int64_t HashStoreImpl::add(const std::string& key, std::int64_t delta,
                                std::chrono::milliseconds) {
  std::int64_t value = 0;
  {
    std::lock_guard lock(mutex_);
    const auto it = data_.find(key);
    value = store_detail::added_counter("HashStore", key, it == data_.end() ? nullptr : &it->second,
                                        delta);
    data_[key] = store_detail::format_counter(value);
  }
  changed_.notify_all();
  return value;
}

bool HashStoreImpl::check(const std::vector<std::string>& keys, std::chrono::milliseconds) {
  std::lock_guard lock(mutex_);
  return missing_locked(keys).empty();
}

Bytes HashStoreImpl::compare_set(const std::string& key, const Bytes& expected,
                                 const Bytes& desired, std::chrono::milliseconds) {
  store_detail::CompareSetOutcome outcome;
  {
    std::lock_guard lock(mutex_);
    const auto it = data_.find(key);
    outcome = store_detail::compare_set_outcome(it == data_.end() ? nullptr : &it->second, expected,
                                                desired);
    if (!outcome.store) return outcome.value;
    data_[key] = desired;
  }
  changed_.notify_all();
  return outcome.value;
}

bool HashStoreImpl::delete_key(const std::string& key, std::chrono::milliseconds) {
  std::lock_guard lock(mutex_);
  return data_.erase(key) > 0;
}

std::int64_t HashStoreImpl::num_keys(std::chrono::milliseconds) {
  std::lock_guard lock(mutex_);
  return static_cast<std::int64_t>(data_.size());
}

}  // namespace core

HashStore::HashStore() : ImplementedStore(std::make_shared<core::HashStoreImpl>()) {}

}  // namespace dist
