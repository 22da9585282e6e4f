// TCPStore: its implementation's constructor (which waits for the workers), each call as a request
// to the server over the object's TcpStoreClient connection, with its limits checked first, and
// the public class's constructors (the public one's arguments checked) and accessors.
#include "core/store/tcp_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "core/store/tcp_store_client.hpp"
#include "dist/errors.hpp"

namespace dist::core {

using namespace tcp_store;
using Clock = std::chrono::steady_clock;

namespace {
// Extra time a client waits beyond a `wait` timeout for the server's own timeout reply.
constexpr std::chrono::seconds reply_grace{5};

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

// A value over max_value is refused here, as the server would.
void check_value_size(const Bytes& value, const TcpStoreOptions& options, const std::string& what) {
  if (value.size() > options.max_value)
    throw InvalidArgument("TcpStore " + what + ": a value of " + std::to_string(value.size()) +
                          " bytes exceeds the store's limit of " +
                          std::to_string(options.max_value) +
                          " bytes (TcpStoreOptions::max_value)");
}

// A wait or check over max_keys is refused here, as the server would (missing() is batched).
void check_key_count(std::size_t keys, std::size_t max_keys, const std::string& what) {
  if (keys > max_keys)
    throw InvalidArgument("TcpStore " + what + ": " + std::to_string(keys) +
                          " keys exceed the limit of " + std::to_string(max_keys) +
                          " keys per request (TcpStoreOptions::max_keys)");
}
}  // namespace

TcpStoreImpl::TcpStoreImpl(const TcpStoreOptions& options) : options_(options) {
  TcpStoreOptions& o = options_;
  if (o.secret.size() > max_hello / 2)
    throw InvalidArgument("TcpStore: the secret is " + std::to_string(o.secret.size()) +
                          " bytes; at most " + std::to_string(max_hello / 2) + " are allowed");
  const auto start = Clock::now();
  if (o.is_server) {
    server_ = std::make_unique<TcpStoreServer>(
        o.host, o.port,
        TcpStoreServerOptions{.max_message = o.max_message,
                              .max_value = o.max_value,
                              .max_total = o.max_total,
                              .max_keys = o.max_keys,
                              .idle_timeout = o.idle_timeout,
                              .secret = o.secret,
                              .world_size = o.world_size,
                              .generation = o.generation,
                              .members_only_prefix = o.rank >= 0 ? "calls/" : ""});
    o.port = server_->port();
  }
  client_ = std::make_unique<TcpStoreClient>(o);
  {
    const TcpStoreClient::Turn turn(*client_, Clock::now() + std::chrono::hours(24), "connect");
    client_->connect(start + o.timeout);
  }
  if (!server_ || o.wait_for_workers <= 0) return;
  const auto workers = static_cast<std::size_t>(o.wait_for_workers);
  for (auto pause = std::chrono::milliseconds(1); server_->joined_clients() < workers;) {
    const auto now = Clock::now();
    if (now >= start + o.timeout)
      throw TimeoutError("TCPStore: " + std::to_string(server_->joined_clients()) + " of " +
                         std::to_string(workers) + " store clients (world_size, the master's " +
                         "included) connected to the store at " + client_->where + " within " +
                         std::to_string(o.timeout.count()) + " ms");
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, start + o.timeout - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

TcpStoreImpl::~TcpStoreImpl() = default;

std::vector<Store::RankContact> TcpStoreImpl::contacts(const std::vector<int>& ranks,
                                                       std::chrono::milliseconds timeout) {
  check_key_count(ranks.size(), options_.max_keys, "contacts");
  Writer w;
  w.u8(static_cast<std::uint8_t>(Command::contacts)).u32(static_cast<std::uint32_t>(ranks.size()));
  for (const int r : ranks) w.u32(static_cast<std::uint32_t>(r));
  const Bytes reply = client_->exchange(frame_of(w, options_.max_message, "contacts"),
                                        Clock::now() + timeout, "contacts");
  Reader in(reply);
  const Status status = status_of(in);
  if (status != Status::ok) throw_reply(in, status, "contacts");
  if (in.u32() != ranks.size())
    throw BackendError("TcpStore: the store's reply to contacts lists another number of ranks");
  std::vector<RankContact> out(ranks.size());
  for (auto& c : out) {
    const std::uint8_t state = in.u8();
    if (state > static_cast<std::uint8_t>(RankContact::State::closed))
      throw BackendError("TcpStore: the store's reply to contacts holds an unknown state");
    c.state = static_cast<RankContact::State>(state);
    c.since = std::chrono::milliseconds(static_cast<std::int64_t>(in.u64()));
  }
  in.done();
  return out;
}

Store::HostReach TcpStoreImpl::reach_host(std::chrono::milliseconds timeout) const {
  if (hosted_here()) return HostReach::unknown;
  asio::io_context io;
  asio::ip::tcp::resolver resolver(io);
  std::error_code ec;
  const auto found = resolver.resolve(options_.host, std::to_string(options_.port), ec);
  if (ec || found.empty()) return HostReach::unknown;
  asio::ip::tcp::socket socket(io);
  std::error_code result = asio::error::would_block;
  socket.async_connect(found.begin()->endpoint(), [&](std::error_code e) { result = e; });
  io.run_for(timeout);
  if (result == asio::error::would_block) return HostReach::silent;  // no SYN-ACK, no RST
  if (!result) return HostReach::accepting;  // closed at once: the server drops it unanswered
  if (result == asio::error::connection_refused) return HostReach::refused;
  return HostReach::silent;  // host or network unreachable
}

void TcpStoreImpl::set(const std::string& key, const Bytes& value,
                       std::chrono::milliseconds store_timeout) {
  set_within(key, value, store_timeout);
}

void TcpStoreImpl::set_within(const std::string& key, const Bytes& value,
                              std::chrono::milliseconds timeout) {
  const std::string what = "set('" + key + "')";
  check_value_size(value, options_, what);
  Writer w;
  w.u8(static_cast<std::uint8_t>(Command::set)).str(key).bytes(value);
  const Bytes frame = frame_of(w, options_.max_message, what);
  const Bytes reply = client_->exchange(frame, Clock::now() + timeout, what);
  Reader in(reply);
  if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "set");
}
void TcpStoreImpl::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
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

Bytes TcpStoreImpl::get(const std::string& key, std::chrono::milliseconds timeout,
                        std::chrono::milliseconds store_timeout) {
  wait({key}, timeout);
  Writer w;
  const Bytes frame = frame_of(w.u8(static_cast<std::uint8_t>(Command::get)).str(key),
                               options_.max_message, "get('" + key + "')");
  const Bytes reply = client_->exchange(frame, Clock::now() + store_timeout, "get('" + key + "')");
  Reader in(reply);
  const Status s = status_of(in);
  if (s == Status::missing)
    store_detail::throw_timeout("TcpStore " + client_->where, timeout, {key});
  if (s != Status::ok) throw_reply(in, s, "get");
  return in.bytes();
}

std::int64_t TcpStoreImpl::add(const std::string& key, std::int64_t delta,
                               std::chrono::milliseconds store_timeout) {
  Writer w;
  w.u8(static_cast<std::uint8_t>(Command::add)).str(key).u64(static_cast<std::uint64_t>(delta));
  const Bytes frame = frame_of(w, options_.max_message, "add('" + key + "')");
  const Bytes reply = client_->exchange(frame, Clock::now() + store_timeout, "add('" + key + "')");
  Reader in(reply);
  if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "add");
  return static_cast<std::int64_t>(in.u64());
}

bool TcpStoreImpl::check(const std::vector<std::string>& keys,
                         std::chrono::milliseconds store_timeout) {
  check_key_count(keys.size(), options_.max_keys, "check");
  Writer w;
  const Bytes frame = frame_of(w.u8(static_cast<std::uint8_t>(Command::check)).strings(keys),
                               options_.max_message, "check");
  const Bytes reply = client_->exchange(frame, Clock::now() + store_timeout, "check");
  Reader in(reply);
  if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "check");
  return in.u8() != 0;
}

std::vector<std::string> TcpStoreImpl::missing(const std::vector<std::string>& keys,
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

Bytes TcpStoreImpl::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired,
                                std::chrono::milliseconds store_timeout) {
  const std::string what = "compare_set('" + key + "')";
  check_value_size(desired, options_, what);
  Writer w;
  w.u8(static_cast<std::uint8_t>(Command::compare_set)).str(key).bytes(expected).bytes(desired);
  const Bytes frame = frame_of(w, options_.max_message, what);
  const Bytes reply = client_->exchange(frame, Clock::now() + store_timeout, what);
  Reader in(reply);
  if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "compare_set");
  return in.bytes();
}

bool TcpStoreImpl::delete_key(const std::string& key, std::chrono::milliseconds store_timeout) {
  const std::string what = "delete_key('" + key + "')";
  Writer w;
  w.u8(static_cast<std::uint8_t>(Command::delete_key)).str(key);
  const Bytes frame = frame_of(w, options_.max_message, what);
  const Bytes reply = client_->exchange(frame, Clock::now() + store_timeout, what);
  Reader in(reply);
  if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "delete_key");
  return in.u8() != 0;
}

std::int64_t TcpStoreImpl::num_keys(std::chrono::milliseconds store_timeout) {
  const Bytes frame = Writer().u8(static_cast<std::uint8_t>(Command::num_keys)).finish();
  const Bytes reply = client_->exchange(frame, Clock::now() + store_timeout, "num_keys");
  Reader in(reply);
  if (const Status s = status_of(in); s != Status::ok) throw_reply(in, s, "num_keys");
  return static_cast<std::int64_t>(in.u64());
}

TcpStoreOptions tcp_store_options(std::string host, std::uint16_t port, bool is_server,
                                  std::chrono::milliseconds timeout) {
  TcpStoreOptions options;
  options.host = std::move(host);
  options.port = port;
  options.is_server = is_server;
  options.timeout = timeout;
  // distrun's per-job secret: the store then refuses clients without it (see docs/security.md).
  if (const char* secret = std::getenv("DIST_STORE_SECRET")) options.secret = secret;
  return options;
}

}  // namespace dist::core

namespace dist {

namespace {
// The public constructor's arguments, checked, as options.
core::TcpStoreOptions public_options(std::string host, int port, int world_size, bool is_master,
                                     std::chrono::milliseconds timeout) {
  if (port < 0 || port > 65535 || (port == 0 && !is_master))
    throw InvalidArgument("TCPStore: port " + std::to_string(port) +
                          " is not a port number (1..65535; 0, any free port, on the master only)");
  if (world_size == 0 || world_size < -1)
    throw InvalidArgument("TCPStore: world_size must be positive, or -1 when unknown; got " +
                          std::to_string(world_size));
  if (timeout.count() <= 0)
    throw InvalidArgument("TCPStore: timeout must be positive, got " +
                          std::to_string(timeout.count()) + " ms");
  auto options = core::tcp_store_options(std::move(host), static_cast<std::uint16_t>(port),
                                         is_master, timeout);
  options.wait_for_workers = std::max(world_size, 0);
  return options;
}
}  // namespace

TCPStore::TCPStore(std::string host, int port, int world_size, bool is_master,
                   std::chrono::milliseconds timeout)
    : TCPStore(public_options(std::move(host), port, world_size, is_master, timeout)) {}

TCPStore::TCPStore(const core::TcpStoreOptions& options)
    : ImplementedStore(std::make_shared<core::TcpStoreImpl>(options)) {
  set_timeout(options.timeout);
}

TCPStore::~TCPStore() = default;

std::uint16_t TCPStore::port() const { return impl<core::TcpStoreImpl>().options().port; }
const std::string& TCPStore::host() const { return impl<core::TcpStoreImpl>().options().host; }
const core::TcpStoreServer* TCPStore::server() const { return impl<core::TcpStoreImpl>().server(); }

}  // namespace dist
