// The flight recorder: every rank's last calls in a fixed ring (default 1,024; env
// DIST_FLIGHT_RECORDER_ENTRIES), always on, at a few nanoseconds a call (no lock, raw ticks). Each
// record is a call's description, its group and sequence number, its state and its post and end
// times; the records travel through the store as bytes (encode_records) when a call fails, and the
// publisher keeps each rank's latest ones there.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/calls/call.hpp"
#include "core/calls/call_clock.hpp"
#include "core/store/store.hpp"

namespace dist::core {

enum class CallState : std::uint8_t { posted, completed, failed };
DIST_API std::string_view to_string(CallState state);

struct CallRecord {
  CallDesc call;
  std::uint64_t seq = 0;  // the group's sequence number (0: p2p)
  std::string group;      // "world", "group {0, 2}"
  CallState state = CallState::posted;
  std::int64_t posted_us = 0;  // system clock, microseconds since the epoch
  std::int64_t ended_us = 0;   // 0 while posted
  std::uint64_t chain = 0;     // the group's calls #1..seq hashed (chain_hash); 0 for p2p
  std::string group_key;       // the group's identity ("w", "w.2"): names repeat, keys do not
};

// "all_reduce(op=sum, float32 x 1) on world #5"
DIST_API std::string describe(const CallRecord& record);

// The records as store bytes, and back; decode raises InvalidArgument on corrupt bytes.
DIST_API Bytes encode_records(const std::vector<CallRecord>& records);
DIST_API std::vector<CallRecord> decode_records(const Bytes& bytes);

DIST_API std::int64_t wall_clock_us();

class DIST_API FlightRecorder {
 public:
  // `capacity` 0: nothing is recorded; else rounded up to a power of two (a slot is a mask away).
  explicit FlightRecorder(std::size_t capacity);
  // DIST_FLIGHT_RECORDER_ENTRIES, else 1,024 (InvalidArgument when it is not a number).
  static std::size_t default_capacity();

  // Adds a group's name to the table records point into; returns its index.
  std::uint32_t add_group(std::string name, std::string key);
  // Records a call (`chain`: its CallRecord::chain); returns its ticket for end().
  std::uint64_t post(std::uint32_t group, std::uint64_t seq, const CallDesc& call,
                     std::uint64_t chain = 0);
  // Marks the call of `ticket` completed or failed (nothing when the ring has overwritten it).
  void end(std::uint64_t ticket, CallState state);

  // Unnumbers the group's records so far (seq 0): its numbering starts again (init_dist's own
  // calls are not the user's #1 and #2).
  // `key` is the group's key from now on.
  void retire_numbers(std::uint32_t group, const std::string& key);

  // The last `n` records, oldest first.
  std::vector<CallRecord> last(std::size_t n) const;
  std::size_t capacity() const { return ring_.size(); }
  // Changes with every post and end (the publisher republishes only then).
  std::uint64_t version() const;

 private:
  // A record as atomic words (CallDesc's three, seq, ticket, chain, post and end ticks, group and
  // state), behind a sequence guard: odd while its writer writes, so a reader on another thread
  // (the publisher) retries instead of reading half a record. Writers take no lock: two write one
  // slot at once only when a thread's call is still open after 1,024 others were made meanwhile.
  static constexpr std::size_t words = 9;
  struct Slot {
    std::atomic<std::uint64_t> guard{0};
    std::array<std::atomic<std::uint64_t>, words> word{};
  };
  void write(Slot& slot, const std::array<std::uint64_t, words>& values);
  std::array<std::uint64_t, words> read(const Slot& slot) const;

  CallClock clock_;
  std::vector<Slot> ring_;
  std::uint64_t mask_;  // ring_.size() - 1
  mutable std::mutex groups_mutex_;
  std::vector<std::pair<std::string, std::string>> groups_;  // name, key
  std::atomic<std::uint64_t> next_ticket_{0};
  std::atomic<std::uint64_t> ends_{0};
};

}  // namespace dist::core
