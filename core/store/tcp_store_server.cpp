// TcpStoreServer: one io thread runs the acceptor and every session, so the map and the parked
// waiters need no lock. A session says hello (rank, secret), then reads one request frame at a
// time (memory grows with the bytes that arrive; idle half-messages are dropped), answers it, and
// reads the next; any protocol violation closes that session and nothing else.
#include "core/store/tcp_store_server.hpp"

#include "core/store/tcp_store_session.hpp"
#include "dist/errors.hpp"

namespace dist::core {

using namespace tcp_store;
using tcp_store_detail::Session;

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
    std::make_shared<Session>(*this, std::move(socket))->start();
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

TcpStoreServer::TcpStoreServer(const std::string& host, std::uint16_t port,
                               TcpStoreServerOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
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
    throw BackendError(
        "TcpStore: cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message(),
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

std::size_t TcpStoreServer::claimed_ranks() const { return impl_->claimed.load(); }

std::size_t TcpStoreServer::joined_clients() const { return impl_->joined.load(); }

}  // namespace dist::core
