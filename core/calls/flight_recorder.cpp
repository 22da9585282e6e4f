// FlightRecorder's ring (one lock, taken twice per call) and the records' byte encoding.
#include "core/calls/flight_recorder.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/init/rendezvous.hpp"
#include "dist/errors.hpp"

namespace dist::core {

std::string_view to_string(CallState state) {
  switch (state) {
    case CallState::posted: return "posted";
    case CallState::completed: return "completed";
    case CallState::failed: return "failed";
  }
  return "unknown";
}

std::string describe(const CallRecord& r) {
  std::string text = describe(r.call) + " on " + r.group;
  if (r.seq > 0) text += " #" + std::to_string(r.seq);
  return text;
}

std::int64_t wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

FlightRecorder::FlightRecorder(std::size_t capacity) : ring_(capacity) {}

std::size_t FlightRecorder::default_capacity() {
  const auto value = get_env("DIST_FLIGHT_RECORDER_ENTRIES");
  if (!value) return 1024;
  std::size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(*value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value->size() || n > (1u << 24))
    throw InvalidArgument("DIST_FLIGHT_RECORDER_ENTRIES must be a number of calls from 0 to " +
                          std::to_string(1u << 24) + ", got '" + *value + "'");
  return static_cast<std::size_t>(n);
}

std::uint32_t FlightRecorder::add_group(std::string name) {
  std::lock_guard lock(mutex_);
  groups_.push_back(std::move(name));
  return static_cast<std::uint32_t>(groups_.size() - 1);
}

std::uint64_t FlightRecorder::post(std::uint32_t group, std::uint64_t seq, const CallDesc& call,
                                   std::uint64_t chain) {
  const std::int64_t now = wall_clock_us();
  std::lock_guard lock(mutex_);
  const std::uint64_t ticket = ++next_ticket_;
  ++version_;
  if (ring_.empty()) return ticket;
  Slot& s = ring_[ticket % ring_.size()];
  s.call = call;
  s.seq = seq;
  s.ticket = ticket;
  s.chain = chain;
  s.posted_us = now;
  s.ended_us = 0;
  s.group = group;
  s.state = CallState::posted;
  return ticket;
}

void FlightRecorder::end(std::uint64_t ticket, CallState state) {
  const std::int64_t now = wall_clock_us();
  std::lock_guard lock(mutex_);
  ++version_;
  if (ring_.empty()) return;
  Slot& s = ring_[ticket % ring_.size()];
  if (s.ticket != ticket) return;
  s.state = state;
  s.ended_us = now;
}

void FlightRecorder::retire_numbers(std::uint32_t group) {
  std::lock_guard lock(mutex_);
  ++version_;
  for (Slot& s : ring_)
    if (s.group == group) s.seq = 0;
}

std::vector<CallRecord> FlightRecorder::last(std::size_t n) const {
  std::lock_guard lock(mutex_);
  std::vector<CallRecord> out;
  if (ring_.empty()) return out;
  const std::uint64_t newest = next_ticket_;
  const std::uint64_t count = std::min<std::uint64_t>({n, ring_.size(), newest});
  for (std::uint64_t t = newest - count + 1; t <= newest && count > 0; ++t) {
    const Slot& s = ring_[t % ring_.size()];
    out.push_back({s.call, s.seq, groups_.at(s.group), s.state, s.posted_us, s.ended_us, s.chain});
  }
  return out;
}

std::uint64_t FlightRecorder::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

namespace {
// Fixed-width fields in this machine's byte order: the ranks of one job share an architecture.
struct Fixed {
  CallDesc call;
  std::uint64_t seq;
  std::int64_t posted_us;
  std::int64_t ended_us;
  std::uint64_t chain;
  std::uint32_t group_bytes;
  CallState state;
};
constexpr std::uint32_t max_records = 1u << 20;

[[noreturn]] void corrupt(const std::string& what) {
  throw InvalidArgument("flight recorder bytes from the store are corrupt: " + what);
}
}  // namespace

Bytes encode_records(const std::vector<CallRecord>& records) {
  Bytes out(sizeof(std::uint32_t));
  const auto n = static_cast<std::uint32_t>(records.size());
  std::memcpy(out.data(), &n, sizeof n);
  for (const CallRecord& r : records) {
    Fixed f{};
    f.call = r.call;
    f.seq = r.seq;
    f.posted_us = r.posted_us;
    f.ended_us = r.ended_us;
    f.chain = r.chain;
    f.group_bytes = static_cast<std::uint32_t>(r.group.size());
    f.state = r.state;
    const std::size_t at = out.size();
    out.resize(at + sizeof f + r.group.size());
    std::memcpy(out.data() + at, &f, sizeof f);
    std::memcpy(out.data() + at + sizeof f, r.group.data(), r.group.size());
  }
  return out;
}

std::vector<CallRecord> decode_records(const Bytes& bytes) {
  std::uint32_t n = 0;
  if (bytes.size() < sizeof n) corrupt("shorter than its record count");
  std::memcpy(&n, bytes.data(), sizeof n);
  if (n > max_records) corrupt(std::to_string(n) + " records");
  std::vector<CallRecord> out;
  std::size_t at = sizeof n;
  for (std::uint32_t i = 0; i < n; ++i) {
    Fixed f{};
    if (bytes.size() - at < sizeof f) corrupt("record " + std::to_string(i) + " is cut short");
    std::memcpy(&f, bytes.data() + at, sizeof f);
    at += sizeof f;
    if (bytes.size() - at < f.group_bytes)
      corrupt("record " + std::to_string(i) + "'s group is cut short");
    if (static_cast<int>(f.call.kind) >= call_kind_count || static_cast<int>(f.state) > 2)
      corrupt("record " + std::to_string(i) + " has an unknown kind or state");
    out.push_back({f.call, f.seq, std::string(bytes.data() + at, f.group_bytes), f.state,
                   f.posted_us, f.ended_us, f.chain});
    at += f.group_bytes;
  }
  if (at != bytes.size()) corrupt(std::to_string(bytes.size() - at) + " bytes past the records");
  return out;
}

}  // namespace dist::core
