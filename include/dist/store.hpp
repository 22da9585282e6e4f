// The rendezvous stores (torch.distributed's Store, TCPStore, FileStore, HashStore, PrefixStore):
// a small key-value service the ranks of a job meet through. init_process_group(backend, store,
// rank, world_size) in <dist/init.hpp> takes one; programs may use one for their own keys too.
#pragma once

#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "dist/export.hpp"

namespace dist {

namespace core {
struct TcpStoreOptions;
class TcpStoreServer;
class StoreImpl;
}  // namespace core

// The interface (c10d's Store). Keys are strings; values are bytes (a std::string or literal is
// stored as its bytes). Every blocking call has a deadline: the store's timeout() unless given,
// and raises TimeoutError naming the keys still missing once it passes. A store is thread-safe.
// Errors: TimeoutError; InvalidArgument (a negative timeout, a value over a TCPStore's limits);
// BackendError (add on a value that is not a counter, a lost connection, an unusable file).
class DIST_API Store {
 public:
  using Bytes = std::vector<char>;
  static constexpr std::chrono::milliseconds default_timeout{std::chrono::minutes(5)};

  virtual ~Store() = default;

  // Sets `key` to `value`, replacing any value it had, and wakes the waiters on it.
  void set(const std::string& key, const Bytes& value);
  template <class Text>
  requires std::convertible_to<const Text&, std::string_view>
  void set(const std::string& key, const Text& value) {
    const std::string_view text(value);
    set(key, Bytes(text.begin(), text.end()));
  }
  // The value of `key`, waiting until it is set (at most the timeout).
  Bytes get(const std::string& key);
  Bytes get(const std::string& key, std::chrono::milliseconds timeout);
  std::string get_string(const std::string& key);
  std::string get_string(const std::string& key, std::chrono::milliseconds timeout);
  // Atomically adds `delta` to the integer counter at `key` (0 when unset; stored as decimal text,
  // as c10d does, so get() reads it) and returns the new value. Wraps around like int64 in C.
  std::int64_t add(const std::string& key, std::int64_t delta);
  // Atomically: when `key` holds `expected`, or is unset and `expected` is empty, sets it to
  // `desired` and returns `desired`; otherwise changes nothing and returns the current value, or
  // `expected` itself when the key is unset (c10d's answer, so compare the result with `desired`).
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired);
  std::string compare_set(const std::string& key, std::string_view expected,
                          std::string_view desired);
  // Waits until every key is set (at most the timeout); an empty list returns at once.
  void wait(const std::vector<std::string>& keys);
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  // Whether every key is set, without waiting.
  bool check(const std::vector<std::string>& keys);
  // Removes `key`; whether it was set. A later get or wait waits for it to be set again.
  bool delete_key(const std::string& key);
  // How many keys are set (a PrefixStore answers for its whole base store, as c10d does; keys
  // dist's own rendezvous set in a store count too).
  std::int64_t num_keys();

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

  // Beyond torch's Store, for dist's own rendezvous and failure handling:
  // set giving a store served by another process at most `timeout` to answer;
  void set(const std::string& key, const Bytes& value, std::chrono::milliseconds timeout);
  // the keys of `keys` that are not set, in order, in a bounded number of requests however many;
  std::vector<std::string> missing(const std::vector<std::string>& keys,
                                   std::chrono::milliseconds timeout);
  // the world rank whose process serves the store to the others (-1: none, as with in-memory and
  // file stores; a TCPStore's master is taken to be rank 0), and whether that process is this one.
  virtual int host_rank() const { return -1; }
  virtual bool hosted_here() const { return false; }
  // what a fresh connection to the store's host finds within `timeout`, for a store that stopped
  // answering: its process is alive (accepting: stopped or hung), gone (refused: it exited), or
  // the host does not answer at all (silent: unreachable, cut off or down); unknown for a store
  // in this process or one that cannot tell.
  enum class HostReach { unknown, accepting, refused, silent };
  virtual HostReach reach_host(std::chrono::milliseconds timeout) const;
  // what the store's host knows of the connections of `ranks` (world ranks whose clients claimed
  // them, as dist's rendezvous stores' do): open, with how long since the rank's last request;
  // waiting in a request now; closed, and since when; unknown (never claimed, or a store that
  // cannot tell: the default). For a rank that stopped answering, a silent open connection means
  // alive but cut off (or frozen), a closed one that it exited.
  struct RankContact {
    enum class State : std::uint8_t { unknown, open, waiting, closed };
    State state = State::unknown;
    std::chrono::milliseconds since{0};
  };
  virtual std::vector<RankContact> contacts(const std::vector<int>& ranks,
                                            std::chrono::milliseconds timeout);

 protected:
  // What an implementation provides. The public calls check their arguments and pass the
  // timeout; do_wait gets a non-empty key list, do_check too.
  virtual void do_set(const std::string& key, const Bytes& value) = 0;
  virtual Bytes do_get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  virtual void do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  virtual std::int64_t do_add(const std::string& key, std::int64_t delta) = 0;
  virtual bool do_check(const std::vector<std::string>& keys) = 0;
  virtual Bytes do_compare_set(const std::string& key, const Bytes& expected,
                               const Bytes& desired) = 0;
  virtual bool do_delete_key(const std::string& key) = 0;
  virtual std::int64_t do_num_keys() = 0;
  // Defaults: do_set (a store in this process answers at once) and one check per key.
  virtual void do_set_within(const std::string& key, const Bytes& value,
                             std::chrono::milliseconds timeout);
  virtual std::vector<std::string> do_missing(const std::vector<std::string>& keys,
                                              std::chrono::milliseconds timeout);

 private:
  std::chrono::milliseconds timeout_ = default_timeout;
};

namespace detail {
// The base of dist's own stores below (not one to derive from): every hook and extra forwards to
// the store's implementation in core/store/, which holds its state; a class below only makes one.
class DIST_API ImplementedStore : public Store {
 public:
  int host_rank() const override;
  bool hosted_here() const override;
  HostReach reach_host(std::chrono::milliseconds timeout) const override;
  std::vector<RankContact> contacts(const std::vector<int>& ranks,
                                    std::chrono::milliseconds timeout) override;

 protected:
  explicit ImplementedStore(std::shared_ptr<core::StoreImpl> impl);
  // A copy shares the implementation (only PrefixStore, whose implementation never changes, has
  // copies); a move copies too, so the source stays usable.
  ImplementedStore(const ImplementedStore&) = default;
  ImplementedStore& operator=(const ImplementedStore&) = default;

  // The implementation, as the class the derived class's constructor made (its .cpp knows it).
  template <class Impl>
  const Impl& impl() const {
    return static_cast<const Impl&>(*impl_);
  }

  void do_set(const std::string& key, const Bytes& value) override;
  Bytes do_get(const std::string& key, std::chrono::milliseconds timeout) override;
  void do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::int64_t do_add(const std::string& key, std::int64_t delta) override;
  bool do_check(const std::vector<std::string>& keys) override;
  Bytes do_compare_set(const std::string& key, const Bytes& expected,
                       const Bytes& desired) override;
  bool do_delete_key(const std::string& key) override;
  std::int64_t do_num_keys() override;
  void do_set_within(const std::string& key, const Bytes& value,
                     std::chrono::milliseconds timeout) override;
  std::vector<std::string> do_missing(const std::vector<std::string>& keys,
                                      std::chrono::milliseconds timeout) override;

 private:
  std::shared_ptr<core::StoreImpl> impl_;
};
}  // namespace detail

// A store served over TCP by the process that constructs it with is_master (c10d's TCPStore):
// that object starts the server on host:port (port 0: any free port, see port()) in a background
// thread; every object, the master's included, is a client. A client retries connecting until
// `timeout` while the server is not up yet. With world_size > 0 the master's constructor waits
// until world_size store objects (itself included) have connected, as torch's wait_for_workers;
// -1: it does not wait. Under distrun, the job's secret (DIST_STORE_SECRET) is required of clients.
// The server, and every key in it, lives as long as the master's object.
// Errors: InvalidArgument (a port outside 0..65535, or 0 for a client; world_size 0 or below -1;
// a timeout that is not positive), BackendError (the port is taken), TimeoutError (no server, or
// not every worker connected, within the timeout).
class DIST_API TCPStore final : public detail::ImplementedStore {
 public:
  TCPStore(std::string host, int port, int world_size = -1, bool is_master = false,
           std::chrono::milliseconds timeout = Store::default_timeout);
  // dist's own: with its limits, secret and rank claims (core/store/tcp_store.hpp).
  explicit TCPStore(const core::TcpStoreOptions& options);
  ~TCPStore() override;
  TCPStore(const TCPStore&) = delete;
  TCPStore& operator=(const TCPStore&) = delete;

  // The server's port (the one it bound when asked for port 0) and host.
  std::uint16_t port() const;
  const std::string& host() const;
  // The server this object hosts (null on clients).
  const core::TcpStoreServer* server() const;
};

// A store kept in a file that several processes (or threads) share (c10d's FileStore): an
// append-only log of records (a set, or a deletion), guarded by flock(2); waiters poll it. The
// file is created if needed. With world_size > 0, the file is removed when the last FileStore
// object open on the path is destroyed, once at least world_size have been (torch's cleanup, which
// counts the users of the file); -1: the file is kept.
// Errors: InvalidArgument (world_size 0 or below -1), BackendError (the file cannot be opened,
// written or read, or is corrupt).
class DIST_API FileStore final : public detail::ImplementedStore {
 public:
  explicit FileStore(std::string path, int world_size = -1);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  const std::string& path() const;
};

// An in-memory store for ranks that are threads of one process (c10d's HashStore).
class DIST_API HashStore final : public detail::ImplementedStore {
 public:
  HashStore();
  HashStore(const HashStore&) = delete;
  HashStore& operator=(const HashStore&) = delete;
};

// A view of another store that puts "<prefix>/" before every key (c10d's PrefixStore), so that
// several groups or programs can share one store without their keys colliding. Its timeout
// starts as the base's. num_keys() is the base store's count (as c10d's). InvalidArgument when
// `store` is null.
class DIST_API PrefixStore final : public detail::ImplementedStore {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);
  const std::shared_ptr<Store>& base() const;
};

}  // namespace dist
