// TcpStoreClient: a TCPStore's connection to its server: connects (retrying until the deadline
// while the server is not up), says hello, and runs one request at a time (a Turn, which a
// request waits for only until its own deadline) on a private io_context with a deadline; a
// timed-out or broken connection is closed and re-established by a later request. Once such a
// reconnection failed, requests fail at once with that failure for a short backoff (so threads
// sharing a store that is gone or cut off do not each spend a budget on it), then one tries again.
#pragma once

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/store/tcp_protocol.hpp"
#include "core/store/tcp_store.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace tcp_store_client_detail {
using Clock = std::chrono::steady_clock;
// How long a client tries to reconnect after losing an established connection (the server's
// host has usually exited then; c10d does not reconnect at all).
inline constexpr std::chrono::seconds reconnect_budget{2};
// After a failure, requests fail at once for this long, doubling at each failure up to the most.
inline constexpr std::chrono::milliseconds first_backoff{250};
inline constexpr std::chrono::milliseconds most_backoff{2000};

inline std::string ms_text(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}
}  // namespace tcp_store_client_detail

struct TcpStoreClient {
  using Clock = tcp_store_client_detail::Clock;
  using tcp = asio::ip::tcp;

  explicit TcpStoreClient(const TcpStoreOptions& o)
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
          const std::string not_yet = hello(deadline);
          if (not_yet.empty()) {
            connected = was_connected = true;
            return;
          }
          last_error = not_yet;
          continue;
        }
        last_error = ec.message();
        // Refused after the store had answered: its process is gone, retrying cannot help (only
        // a first connection waits for a server that is not up yet).
        if (was_connected && ec == asio::error::connection_refused)
          throw BackendError("TcpStore: the store at " + where +
                             " refuses connections: the process hosting it, rank " +
                             std::to_string(options.server_rank) + ", has exited");
      }
      const auto now = Clock::now();
      if (now >= deadline)
        throw TimeoutError("TcpStore: could not connect to the store at " + where + " within " +
                           tcp_store_client_detail::ms_text(now - start) +
                           " (last error: " + last_error +
                           "); is rank 0 running, and are MASTER_ADDR/MASTER_PORT right?");
      std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, std::chrono::milliseconds(500));
    }
  }

  // Sends one request frame and returns the reply's payload.
  Bytes exchange(const Bytes& frame, Clock::time_point deadline, const std::string& what) {
    const Turn turn(*this, deadline, what);
    if (failure && Clock::now() < retry_at) failure->rethrow(what);
    // A store that let a request pass its deadline (its host frozen) gets a short budget until
    // it answers again, so failure and exit paths do not each wait a whole timeout.
    if (unresponsive)
      deadline = std::min(deadline, Clock::now() + tcp_store_client_detail::reconnect_budget);
    // Only a failed reconnection starts the backoff: one slow reply on a loaded machine must not
    // fail the requests after it.
    const bool reconnecting = !connected && was_connected;
    try {
      if (!connected)
        connect(reconnecting
                    ? std::min(deadline, Clock::now() + tcp_store_client_detail::reconnect_budget)
                    : std::max(deadline, Clock::now() + options.timeout));
      Bytes reply = roundtrip(frame, deadline, what);
      unresponsive = false;
      failure.reset();
      backoff = tcp_store_client_detail::first_backoff;
      return reply;
    } catch (const TimeoutError& e) {
      if (reconnecting) remember(e.what(), true);
      throw;
    } catch (const BackendError& e) {
      if (reconnecting) remember(e.what(), false);
      throw;
    }
  }

  // One request at a time on the connection, each waiting for its turn only until its own
  // deadline. (A condition variable, not std::timed_mutex: ThreadSanitizer does not see the
  // pthread_mutex_clocklock that try_lock_until uses, and reports every unlock after it.)
  class Turn {
   public:
    Turn(TcpStoreClient& client, Clock::time_point deadline, const std::string& what)
        : client_(client) {
      std::unique_lock lock(client_.turn_mutex);
      if (!client_.turn_free.wait_until(lock, deadline, [&] { return !client_.busy; }))
        throw TimeoutError("TcpStore: " + what + " was not sent: another thread's request to " +
                           "the store at " + client_.where + " held the connection until its " +
                           "deadline");
      client_.busy = true;
    }
    ~Turn() {
      {
        std::lock_guard lock(client_.turn_mutex);
        client_.busy = false;
      }
      client_.turn_free.notify_one();
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    TcpStoreClient& client_;
  };

  // What the last failure was, so requests in its backoff fail at once the same way.
  struct Failure {
    std::string text;
    bool timed_out = false;
    Clock::time_point at;
    [[noreturn]] void rethrow(const std::string& what) const {
      const std::string text_now = "TcpStore: " + what + " was not sent: the store failed " +
                                   tcp_store_client_detail::ms_text(Clock::now() - at) + " ago (" +
                                   text + ")";
      if (timed_out) throw TimeoutError(text_now);
      throw BackendError(text_now);
    }
  };
  void remember(const std::string& text, bool timed_out) {
    failure = Failure{text, timed_out, Clock::now()};
    retry_at = Clock::now() + backoff;
    backoff = std::min(backoff * 2, tcp_store_client_detail::most_backoff);
  }

  // The request on the connected socket, without the lock or a connect.
  Bytes roundtrip(const Bytes& frame, Clock::time_point deadline, const std::string& what) {
    std::error_code error;
    Bytes payload;
    char header[tcp_store::header_size] = {};
    asio::async_write(socket, asio::buffer(frame), [&](std::error_code ec, std::size_t) {
      if (ec) return void(error = ec);
      asio::async_read(socket, asio::buffer(header), [&](std::error_code ec2, std::size_t) {
        if (ec2) return void(error = ec2);
        const std::size_t size = tcp_store::decode_header(header);
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

  // The connection's first request: who this is, the job's secret, its world size and number.
  // Returns "" when accepted, or why a first connection should try again: the server is an
  // earlier world's of rank 0's process, still closing after destroy_dist (it says so, or drops
  // the connection); any other refusal is final.
  std::string hello(Clock::time_point deadline) {
    tcp_store::Writer w;
    w.u8(static_cast<std::uint8_t>(tcp_store::Command::hello))
        .u32(static_cast<std::uint32_t>(options.rank))
        .u8(was_connected ? 0 : 1)
        .str(options.secret)
        .u32(static_cast<std::uint32_t>(std::max(options.world_size, 0)))
        .u32(options.generation);
    Bytes reply;
    try {
      reply = roundtrip(w.finish(tcp_store::max_hello), deadline, "hello");
    } catch (const BackendError& e) {
      if (was_connected) throw;
      return e.what();
    }
    tcp_store::Reader in(reply);
    const auto status = static_cast<tcp_store::Status>(in.u8());
    if (status == tcp_store::Status::ok) return {};
    std::error_code ignored;
    socket.close(ignored);
    if (status == tcp_store::Status::later) return "the store refused: " + in.str();
    throw BackendError("TcpStore: the store at " + where + " refused this client: " + in.str());
  }

  const TcpStoreOptions& options;
  std::string where;
  asio::io_context io;
  tcp::socket socket{io};
  std::mutex turn_mutex;  // guards busy; Turn holds the connection, not this mutex
  std::condition_variable turn_free;
  bool busy = false;
  bool connected = false;
  bool was_connected = false;
  bool unresponsive = false;
  std::optional<Failure> failure;  // the last request's failure, until one succeeds
  Clock::time_point retry_at{};
  std::chrono::milliseconds backoff = tcp_store_client_detail::first_backoff;
};

}  // namespace dist::core
