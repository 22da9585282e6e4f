// PrefixStore: its keys are the base store's under "<prefix>/"; the base's own timeouts apply
// (the store's timeout starts as the base's), except where a call gives one.
#include "core/store/prefix_store.hpp"

#include "dist/errors.hpp"

namespace dist {

namespace core {

PrefixStoreImpl::PrefixStoreImpl(std::string prefix, std::shared_ptr<Store> base)
    : prefix_(std::move(prefix)), base_(std::move(base)) {
  if (!base_) throw InvalidArgument("PrefixStore: the base store is null");
}

std::vector<std::string> PrefixStoreImpl::keys_of(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(key_of(k));
  return out;
}

void PrefixStoreImpl::set(const std::string& key, const Bytes& value, std::chrono::milliseconds) {
  base_->set(key_of(key), value);
}

Store::Bytes PrefixStoreImpl::get(const std::string& key, std::chrono::milliseconds timeout,
                                  std::chrono::milliseconds) {
  return base_->get(key_of(key), timeout);
}

void PrefixStoreImpl::wait(const std::vector<std::string>& keys,
                           std::chrono::milliseconds timeout) {
  base_->wait(keys_of(keys), timeout);
}

std::int64_t PrefixStoreImpl::add(const std::string& key, std::int64_t delta,
                                  std::chrono::milliseconds) {
  return base_->add(key_of(key), delta);
}

bool PrefixStoreImpl::check(const std::vector<std::string>& keys, std::chrono::milliseconds) {
  return base_->check(keys_of(keys));
}

Store::Bytes PrefixStoreImpl::compare_set(const std::string& key, const Bytes& expected,
                                          const Bytes& desired, std::chrono::milliseconds) {
  return base_->compare_set(key_of(key), expected, desired);
}

bool PrefixStoreImpl::delete_key(const std::string& key, std::chrono::milliseconds) {
  return base_->delete_key(key_of(key));
}

std::int64_t PrefixStoreImpl::num_keys(std::chrono::milliseconds) { return base_->num_keys(); }

void PrefixStoreImpl::set_within(const std::string& key, const Bytes& value,
                                 std::chrono::milliseconds timeout) {
  base_->set(key_of(key), value, timeout);
}

std::vector<std::string> PrefixStoreImpl::missing(const std::vector<std::string>& keys,
                                                  std::chrono::milliseconds timeout) {
  auto out = base_->missing(keys_of(keys), timeout);
  for (auto& k : out) k.erase(0, prefix_.size() + 1);
  return out;
}

}  // namespace core

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : ImplementedStore(
          std::make_shared<core::PrefixStoreImpl>(std::move(prefix), std::move(store))) {
  set_timeout(base()->timeout());
}

const std::shared_ptr<Store>& PrefixStore::base() const {
  return impl<core::PrefixStoreImpl>().base();
}

}  // namespace dist
