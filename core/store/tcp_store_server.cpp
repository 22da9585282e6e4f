// TcpStoreServer: one io thread runs the acceptor and every session, so the map and the parked
// waiters need no lock. A session reads one request frame (in bounded chunks), answers it, then
// reads the next; any protocol violation closes that session and nothing else.
#include "core/store/tcp_store_server.hpp"

#include <asio.hpp>

#include <algorithm>
#include <atomic>
#include <list>
#include <map>
#include <thread>

#include "dist/errors.hpp"

namespace dist::core {

using asio::ip::tcp;
using namespace tcp_store;

namespace {
constexpr std::size_t read_chunk = std::size_t{1} << 20;  // body bytes allocated per read
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
}  // namespace

struct TcpStoreServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::size_t max_message = default_max_message;
  std::map<std::string, Bytes, std::less<>> data;
  std::list<std::shared_ptr<Waiter>> waiters;
  asio::steady_timer retry{io};
  std::uint16_t port = 0;
  std::atomic<std::size_t> rejected{0};
  std::thread thread;

  void accept();
  void run();
  // Answers a request; an empty result means the answer is deferred (a parked wait).
  Bytes handle(const std::shared_ptr<Session>& session, const Bytes& payload);
  Bytes handle_wait(const std::shared_ptr<Session>& session, Reader& in);
  std::vector<std::string> missing(const std::vector<std::string>& keys) const;
  void notify_waiters();
  void finish_waiter(const std::shared_ptr<Waiter>& waiter, bool timed_out);
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(TcpStoreServer::Impl& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)) {}

  void read_header() {
    asio::async_read(socket_, asio::buffer(header_),
                     [self = shared_from_this()](std::error_code ec, std::size_t) {
                       if (!ec) self->on_header();
                     });
  }

  void respond(Bytes frame) {
    reply_ = std::move(frame);
    asio::async_write(socket_, asio::buffer(reply_),
                      [self = shared_from_this()](std::error_code ec, std::size_t) {
                        if (!ec) self->read_header();
                      });
  }

  void reject() {
    ++server_.rejected;
    std::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  void on_header() {
    expected_ = decode_header(header_);
    if (expected_ == 0 || expected_ > server_.max_message) return reject();
    body_.clear();
    read_body();
  }

  void read_body() {
    const std::size_t old = body_.size();
    const std::size_t chunk = std::min(read_chunk, expected_ - old);
    body_.resize(old + chunk);
    asio::async_read(socket_, asio::buffer(body_.data() + old, chunk),
                     [self = shared_from_this()](std::error_code ec, std::size_t) {
                       if (ec) return;
                       if (self->body_.size() < self->expected_) return self->read_body();
                       self->on_request();
                     });
  }

  void on_request() {
    Bytes answer;
    try {
      answer = server_.handle(shared_from_this(), body_);
    } catch (const std::exception&) {  // ProtocolError, bad_alloc: drop this client only
      return reject();
    }
    body_ = Bytes();
    if (!answer.empty()) respond(std::move(answer));
  }

  TcpStoreServer::Impl& server_;
  tcp::socket socket_;
  char header_[header_size] = {};
  std::size_t expected_ = 0;
  Bytes body_;
  Bytes reply_;
};

Bytes status_only(Status s) { return Writer().u8(static_cast<std::uint8_t>(s)).finish(); }

}  // namespace

void TcpStoreServer::Impl::accept() {
  acceptor.async_accept([this](std::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {  // e.g. out of file descriptors: try again shortly, without spinning
      retry.expires_after(std::chrono::milliseconds(10));
      retry.async_wait([this](std::error_code e) {
        if (!e) accept();
      });
      return;
    }
    std::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    std::make_shared<Session>(*this, std::move(socket))->read_header();
    accept();
  });
}

void TcpStoreServer::Impl::run() {
  for (;;) {
    try {
      io.run();
      return;
    } catch (...) {  // a handler must never take the server down; keep serving
    }
  }
}

std::vector<std::string> TcpStoreServer::Impl::missing(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  for (const auto& k : keys)
    if (!data.contains(k)) out.push_back(k);
  return out;
}

Bytes TcpStoreServer::Impl::handle(const std::shared_ptr<Session>& session, const Bytes& payload) {
  Reader in(payload);
  const auto command = static_cast<Command>(in.u8());
  switch (command) {
    case Command::set: {
      std::string key = in.str();
      Bytes value = in.bytes();
      in.done();
      data[std::move(key)] = std::move(value);
      notify_waiters();
      return status_only(Status::ok);
    }
    case Command::get: {
      const std::string key = in.str();
      in.done();
      const auto it = data.find(key);
      if (it == data.end()) return status_only(Status::missing);
      return Writer().u8(static_cast<std::uint8_t>(Status::ok)).bytes(it->second).finish(max_message);
    }
    case Command::add: {
      const std::string key = in.str();
      const auto delta = static_cast<std::int64_t>(in.u64());
      in.done();
      Bytes& slot = data[key];
      std::int64_t value = 0;
      try {
        value = static_cast<std::int64_t>(
            static_cast<std::uint64_t>(store_detail::parse_counter("TcpStore", key, slot)) +
            static_cast<std::uint64_t>(delta));
      } catch (const Error& e) {
        return Writer().u8(static_cast<std::uint8_t>(Status::error)).str(e.what()).finish();
      }
      slot = store_detail::format_counter(value);
      notify_waiters();
      return Writer().u8(static_cast<std::uint8_t>(Status::ok)).u64(static_cast<std::uint64_t>(value)).finish();
    }
    case Command::check: {
      const auto keys = in.strings();
      in.done();
      return Writer().u8(static_cast<std::uint8_t>(Status::ok)).u8(missing(keys).empty() ? 1 : 0).finish();
    }
    case Command::wait: return handle_wait(session, in);
  }
  throw ProtocolError("unknown command");
}

Bytes TcpStoreServer::Impl::handle_wait(const std::shared_ptr<Session>& session, Reader& in) {
  const std::uint64_t timeout_ms = std::min(in.u64(), max_wait_ms);
  auto keys = in.strings();
  in.done();
  if (missing(keys).empty()) return status_only(Status::ok);
  auto waiter = std::make_shared<Waiter>(io, session, std::move(keys));
  waiters.push_back(waiter);
  waiter->timer.expires_after(std::chrono::milliseconds(timeout_ms));
  waiter->timer.async_wait([this, w = std::weak_ptr<Waiter>(waiter)](std::error_code ec) {
    if (ec) return;
    if (auto locked = w.lock()) finish_waiter(locked, true);
  });
  return {};
}

void TcpStoreServer::Impl::finish_waiter(const std::shared_ptr<Waiter>& waiter, bool timed_out) {
  if (waiter->done) return;
  waiter->done = true;
  waiter->timer.cancel();
  if (timed_out)
    waiter->session->respond(Writer()
                                 .u8(static_cast<std::uint8_t>(Status::timeout))
                                 .strings(missing(waiter->keys))
                                 .finish(max_message));
  else
    waiter->session->respond(status_only(Status::ok));
  waiters.remove(waiter);
}

void TcpStoreServer::Impl::notify_waiters() {
  std::vector<std::shared_ptr<Waiter>> ready;
  for (const auto& w : waiters)
    if (missing(w->keys).empty()) ready.push_back(w);
  for (const auto& w : ready) finish_waiter(w, false);
}

namespace {
tcp::endpoint resolve_listen(asio::io_context& io, const std::string& host, std::uint16_t port) {
  std::error_code ec;
  tcp::resolver resolver(io);
  const auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty())
    throw BackendError("TcpStore: cannot resolve the store host '" + host + "': " + ec.message(),
                       ec.value());
  return *results.begin();
}
}  // namespace

TcpStoreServer::TcpStoreServer(const std::string& host, std::uint16_t port, std::size_t max_message)
    : impl_(std::make_unique<Impl>()) {
  impl_->max_message = max_message;
  const tcp::endpoint endpoint = resolve_listen(impl_->io, host, port);
  std::error_code ec;
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (ec == asio::error::address_in_use)
    throw BackendError("TcpStore: port " + std::to_string(port) + " on " + host +
                           " is already in use (another job or a leftover process holds it; "
                           "choose another MASTER_PORT)",
                       ec.value());
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw BackendError("TcpStore: cannot listen on " + host + ":" + std::to_string(port) + ": " +
                           ec.message(),
                       ec.value());
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->accept();
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

TcpStoreServer::~TcpStoreServer() {
  asio::post(impl_->io, [impl = impl_.get()] {
    std::error_code ignored;
    impl->acceptor.close(ignored);
    impl->retry.cancel();
    for (const auto& w : impl->waiters) w->timer.cancel();
    impl->waiters.clear();
    impl->io.stop();
  });
  impl_->thread.join();
}

std::uint16_t TcpStoreServer::port() const { return impl_->port; }

std::size_t TcpStoreServer::rejected_connections() const { return impl_->rejected.load(); }

}  // namespace dist::core
