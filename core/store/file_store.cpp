// FileStore: records are [u32 key length][key][u32 value length][value], appended under an
// exclusive flock and read incrementally under a shared one; wait polls with a short sleep.
#include "core/store/file_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>

#include "dist/errors.hpp"

namespace dist::core {

namespace {
constexpr const char* users_key = "__dist_filestore_done__";

[[noreturn]] void throw_os(const std::string& what, const std::string& path) {
  throw BackendError("FileStore: " + what + " '" + path + "' failed: " + std::strerror(errno),
                     errno);
}

void write_all(int fd, const char* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_os("writing", path);
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void put_u32(Bytes& out, std::size_t value) {
  const auto v = static_cast<std::uint32_t>(value);
  const char* p = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}
}  // namespace

// Holds flock on the store file (shared or exclusive) and this object's mutex.
class FileStore::Lock {
 public:
  Lock(FileStore& store, bool exclusive) : store_(store), guard_(store.mutex_) {
    while (::flock(store_.fd_, exclusive ? LOCK_EX : LOCK_SH) != 0)
      if (errno != EINTR) throw_os("locking", store_.path_);
  }
  ~Lock() { ::flock(store_.fd_, LOCK_UN); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  FileStore& store_;
  std::lock_guard<std::mutex> guard_;
};

FileStore::FileStore(std::string path, int num_workers)
    : path_(std::move(path)), num_workers_(num_workers) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw_os("opening", path_);
}

FileStore::~FileStore() {
  try {
    if (num_workers_ > 0) {
      Lock lock(*this, true);
      if (add_locked(users_key, 1) >= num_workers_) ::unlink(path_.c_str());
    }
  } catch (...) {  // a destructor must not throw; the file is then left behind
  }
  ::close(fd_);
}

void FileStore::refresh_locked() {
  const off_t end = ::lseek(fd_, 0, SEEK_END);
  if (end < 0) throw_os("seeking in", path_);
  if (end <= read_offset_) return;
  Bytes data(static_cast<std::size_t>(end - read_offset_));
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::pread(fd_, data.data() + got, data.size() - got,
                              static_cast<off_t>(read_offset_) + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_os("reading", path_);
    got += static_cast<std::size_t>(n);
  }
  std::size_t pos = 0;
  auto take = [&](std::size_t n) {
    if (data.size() - pos < n)
      throw BackendError("FileStore: '" + path_ + "' is corrupt (a truncated record)");
    const char* p = data.data() + pos;
    pos += n;
    return p;
  };
  auto take_u32 = [&] {
    std::uint32_t v = 0;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return static_cast<std::size_t>(v);
  };
  while (pos < data.size()) {
    const std::size_t key_size = take_u32();
    std::string key(take(key_size), key_size);
    const std::size_t value_size = take_u32();
    const char* value = take(value_size);
    cache_[std::move(key)] = Bytes(value, value + value_size);
  }
  read_offset_ = end;
}

void FileStore::append_locked(const std::string& key, const Bytes& value) {
  Bytes record;
  record.reserve(8 + key.size() + value.size());
  put_u32(record, key.size());
  record.insert(record.end(), key.begin(), key.end());
  put_u32(record, value.size());
  record.insert(record.end(), value.begin(), value.end());
  if (::lseek(fd_, 0, SEEK_END) < 0) throw_os("seeking in", path_);
  write_all(fd_, record.data(), record.size(), path_);
}

void FileStore::do_set(const std::string& key, const Bytes& value) {
  Lock lock(*this, true);
  append_locked(key, value);
}

std::vector<std::string> FileStore::missing_locked(const std::vector<std::string>& keys) const {
  std::vector<std::string> missing;
  for (const auto& k : keys)
    if (!cache_.contains(k)) missing.push_back(k);
  return missing;
}

void FileStore::do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    std::vector<std::string> missing;
    {
      Lock lock(*this, false);
      refresh_locked();
      missing = missing_locked(keys);
    }
    if (missing.empty()) return;
    const auto now = clock::now();
    if (now >= deadline) store_detail::throw_timeout("FileStore", timeout, missing);
    std::this_thread::sleep_for(std::min<clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

Bytes FileStore::do_get(const std::string& key, std::chrono::milliseconds timeout) {
  do_wait({key}, timeout);
  std::lock_guard guard(mutex_);
  return cache_.at(key);
}

std::int64_t FileStore::add_locked(const std::string& key, std::int64_t delta) {
  refresh_locked();
  const auto it = cache_.find(key);
  const std::int64_t old =
      it == cache_.end() ? 0 : store_detail::parse_counter("FileStore", key, it->second);
  const auto value = static_cast<std::int64_t>(static_cast<std::uint64_t>(old) +
                                               static_cast<std::uint64_t>(delta));
  append_locked(key, store_detail::format_counter(value));
  return value;
}

std::int64_t FileStore::do_add(const std::string& key, std::int64_t delta) {
  Lock lock(*this, true);
  return add_locked(key, delta);
}

bool FileStore::do_check(const std::vector<std::string>& keys) {
  Lock lock(*this, false);
  refresh_locked();
  return missing_locked(keys).empty();
}

}  // namespace dist::core
