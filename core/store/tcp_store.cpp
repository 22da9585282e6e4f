// TcpStore's client side: one connection per object, one request at a time (under a mutex), each
// run on a private io_context with a deadline; a timed-out or broken connection is closed and
// re-established by the next request.
#include "core/store/tcp_store.hpp"

#include <algorithm>
#include <asio.hpp>
#include <mutex>
#include <thread>

#include "dist/errors.hpp"

namespace dist::core {

using asio::ip::tcp;
using namespace tcp_store;
using Clock = std::chrono::steady_clock;

namespace {
// Extra time a client waits beyond a `wait` timeout for the server's own timeout reply.
constexpr std::chrono::seconds reply_grace{5};
// How long a client tries to reconnect after losing an established connection (the server's
// host has usually exited then; c10d does not reconnect at all).
constexpr std::chrono::seconds reconnect_budget{2};

std::string ms_text(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}
}  // namespace

struct TcpStore::Client {
  explicit Client(const TcpStoreOptions& o)
      : options(o), where(o.host + ":" + std::to_string(o.port)) {}

  // Runs the started operations until they finish (true) or the deadline passes (false; the
  // socket is closed and the operations cancelled).
  bool run_until(Clock::time_point deadline) {
    io.restart();
    io.run_until(deadline);
    if (io.stopped()) return true;
    std::error_code ignored;
    socket.close(ignored);
    io.restart();
    io.run();
    return false;
  }

  std::error_code try_connect(const tcp::endpoint& endpoint, Clock::time_point deadline) {
    std::error_code result = asio::error::would_block;
    socket.async_connect(endpoint, [&](std::error_code ec) { result = ec; });
    if (!run_until(deadline)) return asio::error::timed_out;
    if (result) {
      std::error_code ignored;
      socket.close(ignored);
    }
    return result;
  }

  void connect(Clock::time_point deadline) {
    const auto start = Clock::now();
    std::string last_error = "no attempt made";
    auto pause = std::chrono::milliseconds(10);
    for (;;) {
      std::error_code ec;
      tcp::resolver resolver(io);
      const auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
      if (ec) last_error = "cannot resolve '" + options.host + "': " + ec.message();
      for (const auto& entry : results) {
        ec = try_connect(entry.endpoint(), deadline);
        if (!ec) {
          socket.set_option(tcp::no_delay(true), ec);
          hello(deadline);
          connected = was_connected = true;
          return;
        }
        last_error = ec.message();
      }
      const auto now = Clock::now();
      if (now >= deadline)
        throw TimeoutError("TcpStore: could not connect to the store at " + where + " within " +
                           ms_text(now - start) + " (last error: " + last_error +
                           "); is rank 0 running, and are MASTER_ADDR/MASTER_PORT right?");
      std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, std::chrono::milliseconds(500));
    }
  }

  // Sends one request frame and returns the reply's payload.
  Bytes exchange(const Bytes& frame, Clock::time_point deadline, const std::string& what) {
    std::lock_guard lock(mutex);
    // A store that let a request pass its deadline (its host frozen) gets a short budget until
    // it answers again, so failure and exit paths do not each wait a whole timeout.
    if (unresponsive) deadline = std::min(deadline, Clock::now() + reconnect_budget);
    if (!connected)
      connect(was_connected ? std::min(deadline, Clock::now() + reconnect_budget)
                            : std::max(deadline, Clock::now() + options.timeout));
    Bytes reply = roundtrip(frame, deadline, what);
    unresponsive = false;
    return reply;
  }

  // The request on the connected socket, without the lock or a connect.
  Bytes roundtrip(const Bytes& frame, Clock::time_point deadline, const std::string& what) {
    std::error_code error;
    Bytes payload;
    char header[header_size] = {};
    asio::async_write(socket, asio::buffer(frame), [&](std::error_code ec, std::size_t) {
      if (ec) return void(error = ec);
      asio::async_read(socket, asio::buffer(header), [&](std::error_code ec2, std::size_t) {
        if (ec2) return void(error = ec2);
        const std::size_t size = decode_header(header);
        if (size == 0 || size > options.max_message) return void(error = asio::error::message_size);
        payload.resize(size);
        asio::async_read(socket, asio::buffer(payload),
                         [&](std::error_code ec3, std::size_t) { error = ec3; });
      });
    });
    if (!run_until(deadline)) {
      connected = false;
      unresponsive = true;
      throw TimeoutError("TcpStore: no reply from the store at " + where + " to " + what +
                         " before the deadline (the process hosting the store, rank " +
                         std::to_string(options.server_rank) + ", is unresponsive)");
    }
    if (error) {
      std::error_code ignored;
      socket.close(ignored);
      connected = false;
      throw BackendError("TcpStore: lost the connection to the store at " + where + " during " +
                             what + ": " + error.message() +
                             " (the process hosting the store, rank " +
                             std::to_string(options.server_rank) + ", may have exited)",
                         error.value());
    }
    return payload;
  }

  // The connection's first request: who this is and the job's secret; a refusal is final.
  void hello(Clock::time_point deadline) {
    Writer w;
    w.u8(static_cast<std::uint8_t>(Command::hello))
        .u32(static_cast<std::uint32_t>(options.rank))
        .u8(was_connected ? 0 : 1)
        .str(options.secret);
    const Bytes reply = roundtrip(w.finish(max_hello), deadline, "hello");
    Reader in(reply);
    if (static_cast<Status>(in.u8()) == Status::ok) return;
    std::error_code ignored;
    socket.close(ignored);
    throw BackendError("TcpStore: the store at " + where + " refused this client: " + in.str());
  }

  const TcpStoreOptions& options;
  std::string where;
  asio::io_context io;
  tcp::socket socket{io};
  std::mutex mutex;
  bool connected = false;
  bool was_connected = false;
  bool unresponsive = false;
};

namespace {
Status status_of(Reader& in) { return static_cast<Status>(in.u8()); }

// The request frame; a request over the message cap is the caller's error.
Bytes frame_of(Writer& w, std::size_t max_message, const std::string& what) {
  try {
    return w.finish(max_message);
  } catch (const ProtocolError& e) {
    throw InvalidArgument("TcpStore " + what + ": " + e.what());
  }
}

[[noreturn]] void throw_reply(Reader& in, Status status, const std::string& what) {
  if (status == Status::error) throw BackendError(in.str());
  throw BackendError("TcpStore: unexpected reply " + std::to_string(static_cast<int>(status)) +
                     " to " + what);
}

// The keys a reply lists: a subset of the `asked` keys of the request, so never more of them
// (checked before any is decoded).
std::vector<std::string> reply_keys(Reader& in, std::size_t asked, const std::string& what) {
  try {
    return in.strings(asked);
  } catch (const TooManyKeys& e) {
    throw BackendError("TcpStore: the store's reply to " + what + " lists " +
                       std::to_string(e.count) + " keys, more than the " + std::to_string(asked) +
                       " asked about");
  }
}

// A wait or check over max_keys is refused here, as the server would (missing() is batched).
void check_key_count(std::size_t keys, std::size_t max_keys, const std::string& what) {
  if (keys > max_keys)
    throw InvalidArgument("TcpStore " + what + ": " + std::to_string(keys) +
                          " keys exceed the limit of " + std::to_string(max_keys) +
                          " keys per request (TcpStoreOptions::max_keys)");
}
}  // namespace

TcpStore::TcpStore(TcpStoreOptions options) : options_(std::move(options)) {
  if (options_.secret.size() > max_hello / 2)
    throw InvalidArgument("TcpStore: the secret is " + std::to_string(options_.secret.size()) +
                          " bytes; at most " + std::to_string(max_hello / 2) + " are allowed");
  if (options_.is_server) {
    server_ = std::make_unique<TcpStoreServer>(
        options_.host, options_.port,
        TcpStoreServerOptions{.max_message = options_.max_message,
                              .max_value = options_.max_value,
                              .max_total = options_.max_total,
                              .max_keys = options_.max_keys,
                              .idle_timeout = options_.idle_timeout,
                              .secret = options_.secret,
                              .world_size = options_.world_size});
    options_.port = server_->port();
  }
  set_timeout(options_.timeout);
  client_ = std::make_unique<Client>(options_);
  std::lock_guard lock(client_->mutex);
  client_->connect(Clock::now() + options_.timeout);
}

TcpStore::~TcpStore() = default;

void TcpStore::do_set(const std::string& key, const Bytes& value) {
  do_set_within(key, value, timeout());
}

void TcpStore::do_set_within(const std::string& key, const Bytes& value,
                             std::chrono::milliseconds timeout) {
  if (value.size() > options_.max_value)
    throw InvalidArgument("TcpStore set('" + key + "'): a value of " +
                          std::to_string(value.size()) + " bytes exceeds the store's limit of " +
                          std::to_string(options_.max_value) +
                          " bytes (TcpStoreOptions::max_value)");
  Writer w;
  w.u8(static_cast<std::uint8_t>(Command::set)).str(key).bytes(value);
  const Bytes frame = frame_of(w, options_.max_message, "set('" + key + "')");
  const Bytes reply = client_->exchange(frame, Clock::now() + timeout, "set('" + key + "')");
  Reader in(reply);
  if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "set");
}

void TcpStore::do_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  check_key_count(keys.size(), options_.max_keys, "wait");
  Writer w;
  w.u8(static_cast<std::uint8_t>(Command::wait)).u64(static_cast<std::uint64_t>(timeout.count()));
  const Bytes frame = frame_of(w.strings(keys), options_.max_message, "wait");
  const Bytes reply = client_->exchange(frame, Clock::now() + timeout + reply_grace, "wait");
  Reader in(reply);
  const Status s = status_of(in);
  if (s == Status::timeout)
    store_detail::throw_timeout("TcpStore " + client_->where, timeout,
                                reply_keys(in, keys.size(), "wait"));
  if (s != Status::ok) throw_reply(in, s, "wait");
}

Bytes TcpStore::do_get(const std::string& key, std::chrono::milliseconds timeout) {
  do_wait({key}, timeout);
  Writer w;
  const Bytes frame = frame_of(w.u8(static_cast<std::uint8_t>(Command::get)).str(key),
                               options_.max_message, "get('" + key + "')");
  const Bytes reply =
      client_->exchange(frame, Clock::now() + this->timeout(), "get('" + key + "')");
  Reader in(reply);
  const Status s = status_of(in);
  if (s == Status::missing)
    store_detail::throw_timeout("TcpStore " + client_->where, timeout, {key});
  if (s != Status::ok) throw_reply(in, s, "get");
  return in.bytes();
}

std::int64_t TcpStore::do_add(const std::string& key, std::int64_t delta) {
  Writer w;
  w.u8(static_cast<std::uint8_t>(Command::add)).str(key).u64(static_cast<std::uint64_t>(delta));
  const Bytes frame = frame_of(w, options_.max_message, "add('" + key + "')");
  const Bytes reply = client_->exchange(frame, Clock::now() + timeout(), "add('" + key + "')");
  Reader in(reply);
  if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "add");
  return static_cast<std::int64_t>(in.u64());
}

bool TcpStore::do_check(const std::vector<std::string>& keys) {
  check_key_count(keys.size(), options_.max_keys, "check");
  Writer w;
  const Bytes frame = frame_of(w.u8(static_cast<std::uint8_t>(Command::check)).strings(keys),
                               options_.max_message, "check");
  const Bytes reply = client_->exchange(frame, Clock::now() + timeout(), "check");
  Reader in(reply);
  if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "check");
  return in.u8() != 0;
}

std::vector<std::string> TcpStore::do_missing(const std::vector<std::string>& keys,
                                              std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::size_t budget = options_.max_message / 2;  // request bytes per batch
  std::vector<std::string> out;
  for (std::size_t begin = 0; begin < keys.size();) {
    std::size_t end = begin, bytes = 0;
    while (end < keys.size() && end - begin < std::max<std::size_t>(options_.max_keys, 1) &&
           (end == begin || bytes + keys[end].size() + 4 <= budget))
      bytes += keys[end++].size() + 4;
    Writer w;
    w.u8(static_cast<std::uint8_t>(Command::missing));
    w.strings(std::vector<std::string>(keys.begin() + static_cast<std::ptrdiff_t>(begin),
                                       keys.begin() + static_cast<std::ptrdiff_t>(end)));
    const Bytes reply =
        client_->exchange(frame_of(w, options_.max_message, "missing"), deadline, "missing");
    Reader in(reply);
    if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "missing");
    for (auto& k : reply_keys(in, end - begin, "missing")) out.push_back(std::move(k));
    begin = end;
  }
  return out;
}

}  // namespace dist::core
