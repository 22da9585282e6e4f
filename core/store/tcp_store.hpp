// TcpStore: the Store ranks of a job share over TCP (c10d's TCPStore). Rank 0 hosts the server on
// MASTER_ADDR:MASTER_PORT in a background thread; every rank, rank 0 included, is a client.
// Connecting retries until the timeout while the server is not up yet; every call has a deadline.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/store/store.hpp"
#include "core/store/tcp_store_server.hpp"

namespace dist::core {

struct TcpStoreOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 29500;  // 0 with is_server: any free port (see TcpStore::port())
  bool is_server = false;      // host the server in this process (rank 0)
  int server_rank = 0;         // the world rank whose process hosts the server
  // How long to keep trying to connect, and the default deadline of get and wait.
  std::chrono::milliseconds timeout = Store::default_timeout;
  // Bytes of one request or reply (both sides), of one value, and of all keys and values together
  // (the server's); keys in one wait/check/missing request (both sides; a larger missing() is
  // sent in batches), which bounds the memory a decoded key list costs (32 B a key, 4 on the
  // wire); how long the server lets a connection sit on a half-sent message or without its hello
  // before dropping it.
  std::size_t max_message = tcp_store::default_max_message;
  std::size_t max_value = tcp_store::default_max_value;
  std::size_t max_total = tcp_store::default_max_total;
  std::size_t max_keys = tcp_store::default_max_keys;
  std::chrono::milliseconds idle_timeout = tcp_store::default_idle_timeout;
  // The job's secret (distrun's DIST_STORE_SECRET): a server with one refuses clients without it.
  std::string secret;
  // The world rank this client speaks for (-1: none); the server refuses a second live
  // connection claiming the same rank. It remembers the claims of open connections only, so
  // without a secret a stranger's claims cost it no more than the connections themselves.
  int rank = -1;
  // The server's world size (rendezvous passes WORLD_SIZE): it refuses claims of ranks outside
  // 0..world_size-1. 0: any rank may be claimed.
  int world_size = 0;
};

class TcpStore final : public Store {
 public:
  // Starts the server first when options.is_server (BackendError when the port is taken), then
  // connects (TimeoutError when no server answers within options.timeout).
  explicit TcpStore(TcpStoreOptions options);
  ~TcpStore() override;
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  // The server's port (the one it bound when options.port was 0).
  std::uint16_t port() const { return options_.port; }
  const std::string& host() const { return options_.host; }
  // The server this object hosts (null on clients).
  const TcpStoreServer* server() const { return server_.get(); }
  int host_rank() const override { return options_.server_rank; }
  bool hosted_here() const override { return server_ != nullptr; }

 protected:
  void do_set(const std::string& key, const Bytes& value) override;
  Bytes do_get(const std::string& key, std::chrono::milliseconds timeout) override;
  void do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::int64_t do_add(const std::string& key, std::int64_t delta) override;
  bool do_check(const std::vector<std::string>& keys) override;
  void do_set_within(const std::string& key, const Bytes& value,
                     std::chrono::milliseconds timeout) override;
  std::vector<std::string> do_missing(const std::vector<std::string>& keys,
                                      std::chrono::milliseconds timeout) override;

 private:
  struct Client;
  TcpStoreOptions options_;
  std::unique_ptr<TcpStoreServer> server_;
  std::unique_ptr<Client> client_;
};

}  // namespace dist::core
