// FileStore (declared in <dist/store.hpp>): a Store kept in a file that several processes share,
// under the name core has always used, and FileStoreImpl, its implementation.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "core/store/store.hpp"
#include "core/store/store_impl.hpp"

namespace dist::core {

using FileStore = dist::FileStore;

class FileStoreImpl final : public StoreImpl {
 public:
  // Opens (or creates) the file; counts this user in it when world_size > 0.
  FileStoreImpl(std::string path, int world_size);
  // Removes the file once every user is done (world_size > 0); never throws.
  ~FileStoreImpl() override;
  FileStoreImpl(const FileStoreImpl&) = delete;
  FileStoreImpl& operator=(const FileStoreImpl&) = delete;

  const std::string& path() const { return path_; }

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
  class Lock;
  // Reads the records appended since the last refresh into the cache (call with the file locked).
  void refresh_locked();
  void append_locked(const std::string& key, const Bytes* value);  // null: a deletion
  std::vector<std::string> missing_locked(const std::vector<std::string>& keys) const;
  std::int64_t add_locked(const std::string& key, std::int64_t delta);

  std::string path_;
  int fd_ = -1;
  int world_size_ = -1;
  std::mutex mutex_;  // this object's cache and file offset (flock orders processes)
  std::map<std::string, Bytes, std::less<>> cache_;
  long long read_offset_ = 0;
};

}  // namespace dist::core
