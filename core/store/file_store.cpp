// FileStore: records are [u32 key length][key][u32 value length][value] (a value length of
// 0xffffffff, with no value, deletes the key), appended under an exclusive flock and read
// incrementally under a shared one; wait polls with a short sleep.
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

namespace dist {

namespace core {

namespace {
// Count the objects destroyed and those open, for the cleanup; not keys num_keys() counts.
constexpr const char* users_key = "__dist_filestore_done__";
constexpr const char* open_key = "__dist_filestore_open__";
// The value length of a deletion record (a value may be at most one byte shorter).
constexpr std::uint32_t deleted = 0xffffffffU;

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
class FileStoreImpl::Lock {
 public:
  Lock(FileStoreImpl& store, bool exclusive) : store_(store), guard_(store.mutex_) {
    while (::flock(store_.fd_, exclusive ? LOCK_EX : LOCK_SH) != 0)
      if (errno != EINTR) throw_os("locking", store_.path_);
  }
  ~Lock() { ::flock(store_.fd_, LOCK_UN); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  FileStoreImpl& store_;
  std::lock_guard<std::mutex> guard_;
};

FileStoreImpl::FileStoreImpl(std::string path, int world_size)
    : path_(std::move(path)), world_size_(world_size) {
  if (world_size_ == 0 || world_size_ < -1)
    throw InvalidArgument("FileStore: world_size must be positive, or -1 to keep the file; got " +
                          std::to_string(world_size_));
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw_os("opening", path_);
  if (world_size_ > 0) {
    try {
      Lock lock(*this, true);
      add_locked(open_key, 1);
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
}

FileStoreImpl::~FileStoreImpl() {
  try {
    if (world_size_ > 0) {
      Lock lock(*this, true);
      const auto done = add_locked(users_key, 1);
      if (add_locked(open_key, -1) <= 0 && done >= world_size_) ::unlink(path_.c_str());
    }
  } catch (...) {  // a destructor must not throw; the file is then left behind
  }
  ::close(fd_);
}

void FileStoreImpl::refresh_locked() {
  const off_t end = ::lseek(fd_, 0, SEEK_END);
  if (end < 0) throw_os("seeking in", path_);
  if (end <= read_offset_) return;
  // A store's records are small: a file that grew by more than this (a sparse or foreign file) is
  // refused, never allocated (it escaped as std::bad_alloc).
  constexpr off_t most_unread = off_t{1} << 30;
  if (end - read_offset_ > most_unread)
    throw BackendError("FileStore: '" + path_ + "' holds " + std::to_string(end - read_offset_) +
                       " unread bytes, more than a store's records can (1 GiB): is it a store "
                       "file, and is it shared by this job only?");
  Bytes data;
  try {
    data.resize(static_cast<std::size_t>(end - read_offset_));
  } catch (const std::bad_alloc&) {
    throw BackendError("FileStore: no memory to read the " + std::to_string(end - read_offset_) +
                       " new bytes of '" + path_ + "'");
  }
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
    if (value_size == deleted) {
      cache_.erase(key);
      continue;
    }
    const char* value = take(value_size);
    cache_[std::move(key)] = Bytes(value, value + value_size);
  }
  read_offset_ = end;
}

void FileStoreImpl::append_locked(const std::string& key, const Bytes* value) {
  const std::size_t value_size = value ? value->size() : 0;
  if (key.size() >= deleted || value_size >= deleted)
    throw InvalidArgument("FileStore: key '" + key.substr(0, 64) + "' of " +
                          std::to_string(key.size()) + " bytes or its value of " +
                          std::to_string(value_size) + " bytes is over the limit of " +
                          std::to_string(deleted - 1) + " bytes");
  Bytes record;
  record.reserve(8 + key.size() + value_size);
  put_u32(record, key.size());
  record.insert(record.end(), key.begin(), key.end());
  put_u32(record, value ? value_size : deleted);
  if (value) record.insert(record.end(), value->begin(), value->end());
  if (::lseek(fd_, 0, SEEK_END) < 0) throw_os("seeking in", path_);
  write_all(fd_, record.data(), record.size(), path_);
}

void FileStoreImpl::set(const std::string& key, const Bytes& value, std::chrono::milliseconds) {
  Lock lock(*this, true);
  append_locked(key, &value);
}

std::vector<std::string> FileStoreImpl::missing_locked(const std::vector<std::string>& keys) const {
  std::vector<std::string> missing;
  for (const auto& k : keys)
    if (!cache_.contains(k)) missing.push_back(k);
  return missing;
}

void FileStoreImpl::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
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

Bytes FileStoreImpl::get(const std::string& key, std::chrono::milliseconds timeout,
                         std::chrono::milliseconds) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {  // once more when the key was deleted between the wait and the read
    wait({key}, std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - std::chrono::steady_clock::now()),
                         std::chrono::milliseconds(0)));
    std::lock_guard guard(mutex_);
    if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
}

std::int64_t FileStoreImpl::add_locked(const std::string& key, std::int64_t delta) {
  refresh_locked();
  const auto it = cache_.find(key);
  const std::int64_t value = store_detail::added_counter(
      "FileStore", key, it == cache_.end() ? nullptr : &it->second, delta);
  const Bytes text = store_detail::format_counter(value);
  append_locked(key, &text);
  return value;
}

std::int64_t FileStoreImpl::add(const std::string& key, std::int64_t delta,
                                std::chrono::milliseconds) {
  Lock lock(*this, true);
  return add_locked(key, delta);
}

bool FileStoreImpl::check(const std::vector<std::string>& keys, std::chrono::milliseconds) {
  Lock lock(*this, false);
  refresh_locked();
  return missing_locked(keys).empty();
}

Bytes FileStoreImpl::compare_set(const std::string& key, const Bytes& expected,
                                 const Bytes& desired, std::chrono::milliseconds) {
  Lock lock(*this, true);
  refresh_locked();
  const auto it = cache_.find(key);
  auto outcome = store_detail::compare_set_outcome(it == cache_.end() ? nullptr : &it->second,
                                                   expected, desired);
  if (outcome.store) append_locked(key, &desired);
  return std::move(outcome.value);
}

bool FileStoreImpl::delete_key(const std::string& key, std::chrono::milliseconds) {
  Lock lock(*this, true);
  refresh_locked();
  if (!cache_.contains(key)) return false;
  append_locked(key, nullptr);
  return true;
}

std::int64_t FileStoreImpl::num_keys(std::chrono::milliseconds) {
  Lock lock(*this, false);
  refresh_locked();
  return static_cast<std::int64_t>(cache_.size() - (cache_.contains(users_key) ? 1 : 0) -
                                   (cache_.contains(open_key) ? 1 : 0));
}

}  // namespace core

FileStore::FileStore(std::string path, int world_size)
    : ImplementedStore(std::make_shared<core::FileStoreImpl>(std::move(path), world_size)) {}

FileStore::~FileStore() = default;

const std::string& FileStore::path() const { return impl<core::FileStoreImpl>().path(); }

}  // namespace dist
