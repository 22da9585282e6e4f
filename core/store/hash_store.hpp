// HashStore: an in-memory Store for ranks that are threads of one process (thread-safe; waits
// block on a condition variable until the keys are set or the deadline passes).
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>

#include "core/store/store.hpp"
#include "dist/export.hpp"

namespace dist::core {

class DIST_API HashStore final : public Store {
 protected:
  void do_set(const std::string& key, const Bytes& value) override;
  Bytes do_get(const std::string& key, std::chrono::milliseconds timeout) override;
  void do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::int64_t do_add(const std::string& key, std::int64_t delta) override;
  bool do_check(const std::vector<std::string>& keys) override;

 private:
  std::vector<std::string> missing_locked(const std::vector<std::string>& keys) const;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Bytes, std::less<>> data_;
};

}  // namespace dist::core
