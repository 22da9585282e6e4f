// open_rendezvous: URL parsing (scheme, host:port incl. [IPv6], query), the env:// variables,
// rank/world-size checks, and the store each init method uses.
#include "core/init/rendezvous.hpp"

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <map>

#include "core/store/file_store.hpp"
#include "core/store/tcp_store.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {

constexpr const char* function = "init_process_group";

std::optional<long long> parse_int(std::string_view text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

struct Url {
  std::string scheme;  // "env", "tcp", "file"
  std::string rest;    // after "://", without the query
  std::map<std::string, std::string> query;
};

Url parse_url(const std::string& init_method) {
  const auto sep = init_method.find("://");
  if (sep == std::string::npos)
    throw InvalidArgument(std::string(function) + ": init_method '" + init_method +
                          "' is not a URL (expected env://, tcp://host:port or file:///path)");
  Url url{init_method.substr(0, sep), init_method.substr(sep + 3), {}};
  const auto q = url.rest.find('?');
  if (q == std::string::npos) return url;
  std::string query = url.rest.substr(q + 1);
  url.rest.resize(q);
  std::size_t pos = 0;
  while (pos <= query.size()) {
    const auto amp = std::min(query.find('&', pos), query.size());
    const std::string item = query.substr(pos, amp - pos);
    const auto eq = item.find('=');
    if (!item.empty())
      url.query[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
    pos = amp + 1;
  }
  return url;
}

// Fills rank / world_size (-1) from the URL query.
void from_query(const Url& url, const char* key, int& value) {
  const auto it = url.query.find(key);
  if (value >= 0 || it == url.query.end()) return;
  const auto parsed = parse_int(it->second);
  if (!parsed || *parsed < 0 || *parsed > 1'000'000)
    throw InvalidArgument(std::string(function) + ": '" + key + "=" + it->second +
                          "' in the init_method URL is not a valid number");
  value = static_cast<int>(*parsed);
}

void check_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0)
    throw InvalidArgument(std::string(function) + ": timeout must be positive, got " +
                          std::to_string(timeout.count()) + " ms");
}

void check_rank(int rank, int world_size, const std::string& method) {
  if (world_size < 1)
    throw InvalidArgument(std::string(function) + ": world_size must be given (>= 1) for " +
                          method + ", got " + std::to_string(world_size));
  if (rank < 0 || rank >= world_size)
    throw InvalidArgument(std::string(function) + ": rank must be in [0, " +
                          std::to_string(world_size) + ") for " + method + ", got " +
                          std::to_string(rank));
}

std::uint16_t parse_port(const std::string& text, const std::string& what) {
  const auto port = parse_int(text);
  if (!port || *port < 1 || *port > 65535)
    throw InvalidArgument(std::string(function) + ": " + what + " '" + text +
                          "' is not a port number (1..65535)");
  return static_cast<std::uint16_t>(*port);
}

std::shared_ptr<Store> make_tcp_store(const std::string& host, std::uint16_t port, int rank,
                                      int world_size, std::chrono::milliseconds timeout) {
  TcpStoreOptions options = tcp_store_options(host, port, rank == 0, timeout);
  options.rank = rank;              // the store refuses a second process claiming the same rank
  options.world_size = world_size;  // and a claim of a rank outside the world
  // This process's n-th world: a rank that re-initialises faster than rank 0 waits for rank 0's
  // new store rather than joining the old one, still open until rank 0's destroy_dist.
  static std::atomic<std::uint32_t> worlds{0};
  options.generation = ++worlds;
  return std::make_shared<TcpStore>(options);
}

Rendezvous env_rendezvous(int rank, int world_size, std::chrono::milliseconds timeout) {
  const std::string context = std::string(function) + " with env://";
  RendezvousAddress address;
  address.host = require_env("MASTER_ADDR", context);
  address.port = store_port(
      static_cast<std::uint16_t>(require_env_int("MASTER_PORT", context, 1, 65535)), context);
  address.rank =
      rank >= 0 ? rank : static_cast<int>(require_env_int("RANK", context, 0, 1'000'000));
  address.world_size = world_size >= 0
                           ? world_size
                           : static_cast<int>(require_env_int("WORLD_SIZE", context, 1, 1'000'000));
  return open_tcp_rendezvous(address, timeout, "env://");
}

Rendezvous tcp_rendezvous(const Url& url, int rank, int world_size,
                          std::chrono::milliseconds timeout) {
  const std::string& hp = url.rest;
  std::size_t colon = hp.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw InvalidArgument(std::string(function) + ": init_method 'tcp://" + hp +
                          "' needs a host and a port (tcp://host:port)");
  std::string host = hp.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const auto port = parse_port(hp.substr(colon + 1), "the port in init_method");
  return open_tcp_rendezvous({host, port, rank, world_size}, timeout, "tcp://");
}

Rendezvous file_rendezvous(const Url& url, int rank, int world_size,
                           std::chrono::milliseconds timeout) {
  if (url.rest.empty() || url.rest.front() != '/')
    throw InvalidArgument(std::string(function) + ": init_method 'file://" + url.rest +
                          "' needs an absolute path (file:///path/to/file)");
  check_rank(rank, world_size, "file://");
  auto store = std::make_shared<FileStore>(url.rest, world_size);
  store->set_timeout(timeout);
  return Rendezvous{std::move(store), rank, world_size, {}};
}

}  // namespace

std::optional<std::string> get_env(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

std::uint16_t store_port(std::uint16_t master_port, const std::string& context) {
  if (get_env("TORCHELASTIC_USE_AGENT_STORE").value_or("") != "True") return master_port;
  if (get_env("DIST_STORE_PORT"))
    return static_cast<std::uint16_t>(require_env_int("DIST_STORE_PORT", context, 1, 65535));
  if (master_port == 65535)
    throw InvalidArgument(context +
                          ": under torchrun, whose agent holds MASTER_PORT=65535, dist's "
                          "store needs a port of its own: set DIST_STORE_PORT");
  return static_cast<std::uint16_t>(master_port + 1);
}

std::string require_env(const char* name, const std::string& context) {
  auto value = get_env(name);
  if (!value) throw InvalidArgument(context + ": the environment variable " + name + " is not set");
  return *value;
}

long long require_env_int(const char* name, const std::string& context, long long min,
                          long long max) {
  const std::string text = require_env(name, context);
  const auto value = parse_int(text);
  if (!value || *value < min || *value > max)
    throw InvalidArgument(context + ": the environment variable " + name + "='" + text +
                          "' is not an integer in [" + std::to_string(min) + ", " +
                          std::to_string(max) + "]");
  return *value;
}

Rendezvous open_tcp_rendezvous(const RendezvousAddress& address, std::chrono::milliseconds timeout,
                               const std::string& method) {
  check_timeout(timeout);
  check_rank(address.rank, address.world_size, method);
  return {make_tcp_store(address.host, address.port, address.rank, address.world_size, timeout),
          address.rank, address.world_size, address.host};
}

Rendezvous store_rendezvous(std::shared_ptr<Store> store, int rank, int world_size,
                            std::chrono::milliseconds timeout) {
  check_timeout(timeout);
  if (!store) throw InvalidArgument(std::string(function) + ": the store is null");
  check_rank(rank, world_size, "a store");
  const Store* base = store.get();
  while (const auto* prefixed = dynamic_cast<const PrefixStore*>(base))
    base = prefixed->base().get();
  const auto* tcp = dynamic_cast<const TcpStore*>(base);
  return Rendezvous{std::move(store), rank, world_size, tcp ? tcp->host() : std::string()};
}

Rendezvous open_rendezvous(const std::string& init_method, int rank, int world_size,
                           std::chrono::milliseconds timeout) {
  check_timeout(timeout);
  const Url url = parse_url(init_method);
  from_query(url, "rank", rank);
  from_query(url, "world_size", world_size);
  if (url.scheme == "env") return env_rendezvous(rank, world_size, timeout);
  if (url.scheme == "tcp") return tcp_rendezvous(url, rank, world_size, timeout);
  if (url.scheme == "file") return file_rendezvous(url, rank, world_size, timeout);
  throw InvalidArgument(std::string(function) + ": unsupported init_method scheme '" + url.scheme +
                        "://' (expected env://, tcp:// or file://)");
}

}  // namespace dist::core
