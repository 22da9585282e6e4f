// The TcpStore wire format: every message is a frame [u32 payload length, little endian][payload],
// with the length capped; a payload is a command or status byte followed by typed fields.
// Pure encoding/decoding, shared by the server and the client, with bounds checks throughout.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/store/store.hpp"

namespace dist::core::tcp_store {

inline constexpr std::size_t default_max_message = std::size_t{64} << 20;  // 64 MiB
inline constexpr std::size_t default_max_value = std::size_t{16} << 20;    // 16 MiB
inline constexpr std::size_t default_max_total = std::size_t{512} << 20;   // 512 MiB
// Keys in one request's list (wait, check, missing) or one reply's: a decoded key costs
// sizeof(std::string) (32 B) against 4 B on the wire, so this, not the message cap, bounds the
// decoded list to max_keys * 32 B plus the message's own bytes (32 MiB + 64 MiB by default).
inline constexpr std::size_t default_max_keys = std::size_t{1} << 20;
inline constexpr std::chrono::milliseconds default_idle_timeout{10'000};
// The cap on a connection's messages until its hello is accepted.
inline constexpr std::size_t max_hello = 4096;
inline constexpr std::size_t header_size = 4;

// A connection's first request is `hello` (rank or -1, whether this is its first connection, the
// job's secret, and optionally the world size the client was given); `missing` answers which of its
// keys are unset. compare_set (key, expected, desired) answers the value compare_set returns,
// delete_key (key) whether the key was set, num_keys how many keys are set, contacts (u32 count,
// u32 ranks) the state of each rank's connection (u8 Store::RankContact::State, u64 milliseconds
// since).
enum class Command : std::uint8_t {
  set = 1,
  get = 2,
  add = 3,
  check = 4,
  wait = 5,
  missing = 6,
  hello = 7,
  compare_set = 8,
  delete_key = 9,
  num_keys = 10,
  contacts = 11
};
// later: a hello from a later world than the server's (it is closing; the client retries).
enum class Status : std::uint8_t { ok = 0, missing = 1, timeout = 2, error = 3, later = 4 };

// A payload that does not parse (truncated field, unknown command, trailing bytes).
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A well-formed list longer than the reader allows: thrown before any key is decoded.
struct TooManyKeys : ProtocolError {
  TooManyKeys(std::size_t n, std::size_t max)
      : ProtocolError("a list of " + std::to_string(n) + " keys exceeds the limit of " +
                      std::to_string(max)),
        count(n),
        limit(max) {}
  std::size_t count, limit;
};

// Builds a frame: the 4-byte header is filled in by finish().
class Writer {
 public:
  Writer() : out_(header_size, '\0') {}
  Writer& u8(std::uint8_t v);
  Writer& u32(std::uint32_t v);
  Writer& u64(std::uint64_t v);
  Writer& str(const std::string& s);
  Writer& bytes(const Bytes& b);
  Writer& strings(const std::vector<std::string>& keys);
  // The frame; throws ProtocolError when the payload exceeds max_message.
  Bytes finish(std::size_t max_message = default_max_message);

 private:
  Bytes out_;
};

// Reads fields from a payload; every read checks the remaining size.
class Reader {
 public:
  explicit Reader(const Bytes& payload) : data_(payload) {}
  std::uint8_t u8();
  std::uint32_t u32();
  std::uint64_t u64();
  std::string str();
  Bytes bytes();
  // A list of at most max_count strings (else TooManyKeys); a count that the bytes left cannot
  // hold (4 per string) is a ProtocolError. Either is raised before anything is allocated.
  std::vector<std::string> strings(std::size_t max_count);
  // Throws ProtocolError unless every byte was consumed.
  void done() const;
  // Whether every byte was consumed (an optional trailing field is absent).
  bool at_end() const { return pos_ == data_.size(); }

 private:
  const char* take(std::size_t n);
  const Bytes& data_;
  std::size_t pos_ = 0;
};

std::uint32_t decode_header(const char (&header)[header_size]);

}  // namespace dist::core::tcp_store
