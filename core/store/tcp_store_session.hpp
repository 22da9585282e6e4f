// The TcpStore server's private parts, shared by tcp_store_server.cpp (acceptor, lifetime) and
// tcp_store_requests.cpp (answers): the server state, parked waiters, and a client's session.
#pragma once

#include <algorithm>
#include <asio.hpp>
#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/store/tcp_store_server.hpp"

namespace dist::core {

using asio::ip::tcp;

namespace tcp_store_detail {
constexpr std::size_t read_chunk = std::size_t{64} << 10;  // body bytes allocated ahead of arrival
constexpr std::uint64_t max_wait_ms = 24ull * 3600 * 1000;

class Session;

struct Waiter {
  std::shared_ptr<Session> session;
  std::vector<std::string> keys;
  asio::steady_timer timer;
  bool done = false;
  Waiter(asio::io_context& io, std::shared_ptr<Session> s, std::vector<std::string> k)
      : session(std::move(s)), keys(std::move(k)), timer(io) {}
};
}  // namespace tcp_store_detail

struct TcpStoreServer::Impl {
  using Session = tcp_store_detail::Session;
  using Waiter = tcp_store_detail::Waiter;
  using Reader = tcp_store::Reader;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  TcpStoreServerOptions options;
  std::map<std::string, Bytes, std::less<>> data;
  std::size_t total = 0;  // bytes of every key and value in `data`
  // Who claimed each rank in its hello: open connections only (close() forgets its claim, and
  // `left` keeps when, for ranks below the world size: at most world_size entries).
  std::map<int, std::weak_ptr<Session>> ranks;
  std::map<int, std::chrono::steady_clock::time_point> left;
  std::atomic<std::size_t> claimed{0};  // ranks.size(), for claimed_ranks()
  std::atomic<std::size_t> joined{0};   // accepted first hellos, for joined_clients()
  std::list<std::shared_ptr<Waiter>> waiters;
  asio::steady_timer retry{io};
  std::uint16_t port = 0;
  std::atomic<std::size_t> rejected{0};
  std::thread thread;

  void accept();
  void run();
  // Answers a request; an empty result means the answer is deferred (a parked wait).
  Bytes handle(const std::shared_ptr<Session>& session, const Bytes& payload);
  Bytes handle(const std::shared_ptr<Session>& session, tcp_store::Command command, Reader& in);
  Bytes handle_hello(const std::shared_ptr<Session>& session, const Bytes& payload);
  Bytes handle_set(Reader& in);
  Bytes handle_add(Reader& in);
  Bytes handle_compare_set(Reader& in);
  Bytes handle_delete_key(Reader& in);
  Bytes handle_wait(const std::shared_ptr<Session>& session, Reader& in);
  Bytes handle_contacts(Reader& in);
  // Stores key=value unless it breaks a limit (then the refusal's text).
  std::string put(const std::string& key, Bytes value);
  std::vector<std::string> missing(const std::vector<std::string>& keys) const;
  bool all_set(const std::vector<std::string>& keys) const;  // missing(keys).empty(), no copies
  void notify_waiters();
  void finish_waiter(const std::shared_ptr<Waiter>& waiter, bool timed_out);
  // A closed connection's rank claim and parked waits.
  void forget(const Session* session, int rank);
};

namespace tcp_store_detail {

using namespace tcp_store;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(TcpStoreServer::Impl& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), idle_(server.io) {
    std::error_code ec;
    const auto remote = socket_.remote_endpoint(ec);
    peer = ec ? "an unknown address"
              : remote.address().to_string() + ":" + std::to_string(remote.port());
  }

  // Until its hello is accepted, a connection gets idle_timeout to send it.
  void start() {
    arm_idle();
    read_header();
  }

  // Also runs while a wait is parked, so that a client that hangs up then is noticed at once (a
  // request sent before the wait's answer breaks the protocol: clients send one at a time).
  void read_header() {
    reading_ = true;
    asio::async_read(socket_, asio::buffer(header_),
                     [self = shared_from_this()](std::error_code ec, std::size_t) {
      self->reading_ = false;
      if (ec) return self->close();
      if (self->parked_) return self->reject();
      if (self->busy_) return void(self->header_waiting_ = true);  // the reply is being written
      self->on_header();
    });
  }

  void respond(Bytes frame) {
    parked_ = false;
    reply_ = std::move(frame);
    asio::async_write(socket_, asio::buffer(reply_),
                      [self = shared_from_this()](std::error_code ec, std::size_t) {
      self->busy_ = false;
      if (ec) return self->close();
      if (self->closing) return self->reject();  // a refused hello
      if (self->header_waiting_) {
        self->header_waiting_ = false;
        return self->on_header();
      }
      if (!self->reading_) self->read_header();
    });
  }

  void reject() {
    ++server_.rejected;
    close();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    idle_.cancel();
    std::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    server_.forget(this, rank);
  }

  bool open() const { return !closed_; }
  bool parked() const { return parked_; }
  std::chrono::steady_clock::time_point last_heard() const { return last_heard_; }

  std::string peer;  // the client's address:port, for errors
  bool authenticated = false;
  int rank = -1;         // the rank its hello claimed (-1: none)
  bool closing = false;  // close once the current reply is written

 private:
  void arm_idle() {
    idle_.expires_after(server_.options.idle_timeout);
    idle_.async_wait([w = weak_from_this()](std::error_code ec) {
      if (ec) return;
      if (auto self = w.lock()) self->reject();
    });
  }

  void on_header() {
    expected_ = decode_header(header_);
    const std::size_t cap = authenticated ? server_.options.max_message : max_hello;
    if (expected_ == 0 || expected_ > cap) return reject();
    body_.clear();
    armed_at_ = 0;
    if (authenticated) arm_idle();  // a half-sent message is dropped after idle_timeout
    read_body();
  }

  // Memory follows the bytes that arrive, not the length the header announced.
  void read_body() {
    const std::size_t old = body_.size();
    const std::size_t chunk = std::min(read_chunk, expected_ - old);
    body_.resize(old + chunk);
    socket_.async_read_some(asio::buffer(body_.data() + old, chunk),
                            [self = shared_from_this(), old](std::error_code ec, std::size_t n) {
      if (ec) return self->close();
      self->body_.resize(old + n);
      if (self->body_.size() < self->expected_) {
        // The deadline restarts only for a chunk's worth of progress, never for a trickle: a
        // client sending a byte now and then (a hello above all) is dropped at idle_timeout.
        if (self->authenticated && self->body_.size() - self->armed_at_ >= read_chunk) {
          self->arm_idle();
          self->armed_at_ = self->body_.size();
        }
        return self->read_body();
      }
      self->idle_.cancel();
      self->on_request();
    });
  }

  void on_request() {
    busy_ = true;
    last_heard_ = std::chrono::steady_clock::now();
    Bytes answer;
    try {
      answer = authenticated ? server_.handle(shared_from_this(), body_)
                             : server_.handle_hello(shared_from_this(), body_);
    } catch (const std::exception&) {  // ProtocolError, bad_alloc: drop this client only
      return reject();
    }
    body_ = Bytes();
    if (!answer.empty()) return respond(std::move(answer));
    parked_ = true;
    if (!reading_) read_header();  // watch for a hang-up
  }

  TcpStoreServer::Impl& server_;
  tcp::socket socket_;
  asio::steady_timer idle_;
  bool closed_ = false;
  bool busy_ = false;            // a request is being answered (until its reply is written)
  bool reading_ = false;         // a header read is in flight
  bool header_waiting_ = false;  // a header arrived while the reply was being written
  bool parked_ = false;          // a wait is parked, its reply not yet started
  std::chrono::steady_clock::time_point last_heard_ = std::chrono::steady_clock::now();
  char header_[header_size] = {};
  std::size_t expected_ = 0;
  std::size_t armed_at_ = 0;  // body bytes when the idle deadline was last armed
  Bytes body_;
  Bytes reply_;
};

}  // namespace tcp_store_detail

}  // namespace dist::core
