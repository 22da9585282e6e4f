// A call record's words and bytes: describe, the store encoding (corrupt bytes refused), and
// the wall clock records are kept in.
#include <chrono>
#include <cstring>

#include "core/calls/flight_recorder.hpp"
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

namespace {
// Fixed-width fields in this machine's byte order: the ranks of one job share an architecture.
struct Fixed {
  CallDesc call;
  std::uint64_t seq;
  std::int64_t posted_us;
  std::int64_t ended_us;
  std::uint64_t chain;
  std::uint32_t group_bytes;
  std::uint32_t key_bytes;
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
    f.key_bytes = static_cast<std::uint32_t>(r.group_key.size());
    f.state = r.state;
    const std::size_t at = out.size();
    out.resize(at + sizeof f + r.group.size() + r.group_key.size());
    std::memcpy(out.data() + at, &f, sizeof f);
    std::memcpy(out.data() + at + sizeof f, r.group.data(), r.group.size());
    std::memcpy(out.data() + at + sizeof f + r.group.size(), r.group_key.data(),
                r.group_key.size());
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
    if (bytes.size() - at < std::size_t{f.group_bytes} + f.key_bytes)
      corrupt("record " + std::to_string(i) + "'s group is cut short");
    if (static_cast<int>(f.call.kind) >= call_kind_count || static_cast<int>(f.state) > 2)
      corrupt("record " + std::to_string(i) + " has an unknown kind or state");
    out.push_back({f.call, f.seq, std::string(bytes.data() + at, f.group_bytes), f.state,
                   f.posted_us, f.ended_us, f.chain,
                   std::string(bytes.data() + at + f.group_bytes, f.key_bytes)});
    at += std::size_t{f.group_bytes} + f.key_bytes;
  }
  if (at != bytes.size()) corrupt(std::to_string(bytes.size() - at) + " bytes past the records");
  return out;
}

}  // namespace dist::core
