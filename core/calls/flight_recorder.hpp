// The flight recorder: every rank's last calls in a fixed ring (default 1,024; env
// DIST_FLIGHT_RECORDER_ENTRIES), always on. Each record is a call's description, its group and
// sequence number, its state and its post and end times; the records travel through the store as
// bytes (encode_records) when a call fails, and the publisher keeps each rank's latest ones there.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/calls/call.hpp"
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
};

// "all_reduce(op=sum, float32 x 1) on world #5"
DIST_API std::string describe(const CallRecord& record);

// The records as store bytes, and back; decode raises InvalidArgument on corrupt bytes.
DIST_API Bytes encode_records(const std::vector<CallRecord>& records);
DIST_API std::vector<CallRecord> decode_records(const Bytes& bytes);

DIST_API std::int64_t wall_clock_us();

class DIST_API FlightRecorder {
 public:
  // `capacity` 0: nothing is recorded.
  explicit FlightRecorder(std::size_t capacity);
  // DIST_FLIGHT_RECORDER_ENTRIES, else 1,024 (InvalidArgument when it is not a number).
  static std::size_t default_capacity();

  // Adds a group's name to the table records point into; returns its index.
  std::uint32_t add_group(std::string name);
  // Records a call (`chain`: its CallRecord::chain); returns its ticket for end().
  std::uint64_t post(std::uint32_t group, std::uint64_t seq, const CallDesc& call,
                     std::uint64_t chain = 0);
  // Marks the call of `ticket` completed or failed (nothing when the ring has overwritten it).
  void end(std::uint64_t ticket, CallState state);

  // Unnumbers the group's records so far (seq 0): its numbering starts again (init_dist's own
  // calls are not the user's #1 and #2).
  void retire_numbers(std::uint32_t group);

  // The last `n` records, oldest first.
  std::vector<CallRecord> last(std::size_t n) const;
  std::size_t capacity() const { return ring_.size(); }
  // Changes with every post and end (the publisher republishes only then).
  std::uint64_t version() const;

 private:
  struct Slot {
    CallDesc call;
    std::uint64_t seq = 0;
    std::uint64_t ticket = 0;
    std::uint64_t chain = 0;
    std::int64_t posted_us = 0;
    std::int64_t ended_us = 0;
    std::uint32_t group = 0;
    CallState state = CallState::posted;
  };
  mutable std::mutex mutex_;
  std::vector<Slot> ring_;
  std::vector<std::string> groups_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t version_ = 0;
};

}  // namespace dist::core
