// PrefixStoreImpl, the implementation of dist::PrefixStore (<dist/store.hpp>): every call goes to
// the base store with "<prefix>/" before each key; the extras are the base's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/store/store_impl.hpp"

namespace dist::core {

class PrefixStoreImpl final : public StoreImpl {
 public:
  // InvalidArgument when `base` is null.
  PrefixStoreImpl(std::string prefix, std::shared_ptr<Store> base);
  const std::shared_ptr<Store>& base() const { return base_; }

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
  void set_within(const std::string& key, const Bytes& value,
                  std::chrono::milliseconds timeout) override;
  std::vector<std::string> missing(const std::vector<std::string>& keys,
                                   std::chrono::milliseconds timeout) override;

  int host_rank() const override { return base_->host_rank(); }
  bool hosted_here() const override { return base_->hosted_here(); }
  HostReach reach_host(std::chrono::milliseconds timeout) const override {
    return base_->reach_host(timeout);
  }
  std::vector<RankContact> contacts(const std::vector<int>& ranks,
                                    std::chrono::milliseconds timeout) override {
    return base_->contacts(ranks, timeout);
  }

 private:
  std::string key_of(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> keys_of(const std::vector<std::string>& keys) const;

  std::string prefix_;
  std::shared_ptr<Store> base_;
};

}  // namespace dist::core
