// TcpStore (dist::TCPStore of <dist/store.hpp>): the Store ranks of a job share over TCP (c10d's
// TCPStore). Rank 0 hosts the server on MASTER_ADDR:MASTER_PORT in a background thread; every
// rank, rank 0 included, is a client. Connecting retries until the timeout while the server is not
// up yet; every call has a deadline. Here: the options dist's own rendezvous opens one with, and
// TcpStoreImpl, the implementation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/store/store.hpp"
#include "core/store/store_impl.hpp"
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
  // Which world of its process the store serves (rendezvous counts init_dist's stores from 1): a
  // client of a later world that reaches an earlier world's server, still closing after
  // destroy_dist, waits for the new one instead of joining the old. 0: any.
  std::uint32_t generation = 0;
  // With is_server: the constructor waits until this many store objects (its own included) have
  // connected (the public constructor's world_size; 0: no wait).
  int wait_for_workers = 0;
};

// The options of a store at host:port, serving when is_server, with the job's secret
// (DIST_STORE_SECRET, set by distrun) when the environment has one.
TcpStoreOptions tcp_store_options(std::string host, std::uint16_t port, bool is_server,
                                  std::chrono::milliseconds timeout);

using TcpStore = dist::TCPStore;

struct TcpStoreClient;

// A TCPStore's state: the server it hosts, if any, and its connection to the server. Each call is
// a request over that connection, its limits checked first.
class TcpStoreImpl final : public StoreImpl {
 public:
  // Starts the server (options.is_server), connects, and waits for the workers (wait_for_workers).
  explicit TcpStoreImpl(const TcpStoreOptions& options);
  ~TcpStoreImpl() override;
  TcpStoreImpl(const TcpStoreImpl&) = delete;
  TcpStoreImpl& operator=(const TcpStoreImpl&) = delete;

  // The options, with the port the server bound when asked for port 0.
  const TcpStoreOptions& options() const { return options_; }
  const TcpStoreServer* server() const { return server_.get(); }

  void set(const std::string& key, const Bytes& value,
           std::chrono::milliseconds store_timeout) override;
  Bytes get(const std::string& key, std::chrono::milliseconds timeout,
            std::chrono::milliseconds store_timeout) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta,
                   std::chrono::milliseconds store_timeout) override;
  bool check(const std::vector<std::string>& keys,
             std::chrono::milliseconds store_timeout) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired,
                    std::chrono::milliseconds store_timeout) override;
  bool delete_key(const std::string& key, std::chrono::milliseconds store_timeout) override;
  std::int64_t num_keys(std::chrono::milliseconds store_timeout) override;
  void set_within(const std::string& key, const Bytes& value,
                  std::chrono::milliseconds timeout) override;
  std::vector<std::string> missing(const std::vector<std::string>& keys,
                                   std::chrono::milliseconds timeout) override;

  int host_rank() const override { return options_.server_rank; }
  bool hosted_here() const override { return server_ != nullptr; }
  HostReach reach_host(std::chrono::milliseconds timeout) const override;
  std::vector<RankContact> contacts(const std::vector<int>& ranks,
                                    std::chrono::milliseconds timeout) override;

 private:
  TcpStoreOptions options_;
  std::unique_ptr<TcpStoreServer> server_;
  std::unique_ptr<TcpStoreClient> client_;  // refers to options_
};

}  // namespace dist::core
