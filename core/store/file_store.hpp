// FileStore: a Store kept in a file that several processes (or threads) share, as c10d's
// FileStore: an append-only log of (key, value) records, guarded by flock(2). Waiters poll.
#pragma once

#include <map>
#include <mutex>

#include "core/store/store.hpp"

namespace dist::core {

class FileStore final : public Store {
 public:
  // Opens (creating it if needed) the store file at `path`. With num_workers > 0, the last of
  // that many FileStore objects to be destroyed removes the file (torch's file:// cleanup).
  explicit FileStore(std::string path, int num_workers = 0);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  const std::string& path() const { return path_; }

 protected:
  void do_set(const std::string& key, const Bytes& value) override;
  Bytes do_get(const std::string& key, std::chrono::milliseconds timeout) override;
  void do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::int64_t do_add(const std::string& key, std::int64_t delta) override;
  bool do_check(const std::vector<std::string>& keys) override;

 private:
  class Lock;
  // Reads the records appended since the last refresh into the cache (call with the file locked).
  void refresh_locked();
  void append_locked(const std::string& key, const Bytes& value);
  std::vector<std::string> missing_locked(const std::vector<std::string>& keys) const;
  std::int64_t add_locked(const std::string& key, std::int64_t delta);

  std::string path_;
  int fd_ = -1;
  int num_workers_ = 0;
  std::mutex mutex_;  // this object's cache and file offset (flock orders processes)
  std::map<std::string, Bytes, std::less<>> cache_;
  long long read_offset_ = 0;
};

}  // namespace dist::core
