// detail::ImplementedStore, which forwards every Store hook and extra of dist's own stores to their
// StoreImpl, and StoreImpl's defaults (Store's).
#include "core/store/store_impl.hpp"

#include "core/store/store.hpp"

namespace dist {

using core::Bytes;

namespace core {

void StoreImpl::set_within(const std::string& key, const Bytes& value,
                           std::chrono::milliseconds timeout) {
  set(key, value, timeout);
}

std::vector<std::string> StoreImpl::missing(const std::vector<std::string>& keys,
                                            std::chrono::milliseconds timeout) {
  return store_detail::missing_one_by_one(
      keys, timeout, [&](const std::string& key) { return check({key}, timeout); });
}

Store::HostReach StoreImpl::reach_host(std::chrono::milliseconds) const {
  return HostReach::unknown;
}

std::vector<Store::RankContact> StoreImpl::contacts(const std::vector<int>& ranks,
                                                    std::chrono::milliseconds) {
  return std::vector<RankContact>(ranks.size());
}

}  // namespace core

namespace detail {

ImplementedStore::ImplementedStore(std::shared_ptr<core::StoreImpl> impl)
    : impl_(std::move(impl)) {}

int ImplementedStore::host_rank() const { return impl_->host_rank(); }

bool ImplementedStore::hosted_here() const { return impl_->hosted_here(); }

Store::HostReach ImplementedStore::reach_host(std::chrono::milliseconds timeout) const {
  return impl_->reach_host(timeout);
}

std::vector<Store::RankContact> ImplementedStore::contacts(const std::vector<int>& ranks,
                                                           std::chrono::milliseconds timeout) {
  return impl_->contacts(ranks, timeout);
}

void ImplementedStore::do_set(const std::string& key, const Bytes& value) {
  impl_->set(key, value, timeout());
}

Bytes ImplementedStore::do_get(const std::string& key, std::chrono::milliseconds timeout) {
  return impl_->get(key, timeout, this->timeout());
}

void ImplementedStore::do_wait(const std::vector<std::string>& keys,
                               std::chrono::milliseconds timeout) {
  impl_->wait(keys, timeout);
}

std::int64_t ImplementedStore::do_add(const std::string& key, std::int64_t delta) {
  return impl_->add(key, delta, timeout());
}

bool ImplementedStore::do_check(const std::vector<std::string>& keys) {
  return impl_->check(keys, timeout());
}

Bytes ImplementedStore::do_compare_set(const std::string& key, const Bytes& expected,
                                       const Bytes& desired) {
  return impl_->compare_set(key, expected, desired, timeout());
}

bool ImplementedStore::do_delete_key(const std::string& key) {
  return impl_->delete_key(key, timeout());
}

std::int64_t ImplementedStore::do_num_keys() { return impl_->num_keys(timeout()); }

void ImplementedStore::do_set_within(const std::string& key, const Bytes& value,
                                     std::chrono::milliseconds timeout) {
  impl_->set_within(key, value, timeout);
}

std::vector<std::string> ImplementedStore::do_missing(const std::vector<std::string>& keys,
                                                      std::chrono::milliseconds timeout) {
  return impl_->missing(keys, timeout);
}

}  // namespace detail

}  // namespace dist
