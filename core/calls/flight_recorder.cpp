// FlightRecorder's ring: lock-free writes of atomic words behind a per-slot sequence guard.
#include "core/calls/flight_recorder.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

#include "core/init/rendezvous.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {
// Word layout of a slot.
enum : std::size_t {
  desc0,
  desc1,
  desc2,
  seq_w,
  ticket_w,
  chain_w,
  posted_w,
  ended_w,
  group_state_w
};
static_assert(sizeof(CallDesc) == 24 && std::is_trivially_copyable_v<CallDesc>,
              "a CallDesc is three words");
}  // namespace

FlightRecorder::FlightRecorder(std::size_t capacity)
    : ring_(capacity ? std::bit_ceil(capacity) : 0), mask_(ring_.empty() ? 0 : ring_.size() - 1) {}

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

std::uint32_t FlightRecorder::add_group(std::string name, std::string key) {
  std::lock_guard lock(groups_mutex_);
  groups_.emplace_back(std::move(name), std::move(key));
  return static_cast<std::uint32_t>(groups_.size() - 1);
}

void FlightRecorder::write(Slot& slot, const std::array<std::uint64_t, words>& values) {
  const std::uint64_t g = slot.guard.load(std::memory_order_relaxed);
  slot.guard.store(g + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  for (std::size_t i = 0; i < words; ++i) slot.word[i].store(values[i], std::memory_order_relaxed);
  slot.guard.store(g + 2, std::memory_order_release);
}

std::array<std::uint64_t, FlightRecorder::words> FlightRecorder::read(const Slot& slot) const {
  std::array<std::uint64_t, words> values{};
  for (;;) {
    const std::uint64_t before = slot.guard.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < words; ++i)
      values[i] = slot.word[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (before % 2 == 0 && slot.guard.load(std::memory_order_relaxed) == before) return values;
  }
}

std::uint64_t FlightRecorder::post(std::uint32_t group, std::uint64_t seq, const CallDesc& call,
                                   std::uint64_t chain) {
  const std::uint64_t ticket = next_ticket_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (ring_.empty()) return ticket;
  std::array<std::uint64_t, words> v{};
  std::memcpy(&v[desc0], &call, sizeof call);
  v[seq_w] = seq;
  v[ticket_w] = ticket;
  v[chain_w] = chain;
  v[posted_w] = CallClock::now();
  v[ended_w] = 0;
  v[group_state_w] = std::uint64_t{group} << 8 | static_cast<std::uint8_t>(CallState::posted);
  write(ring_[ticket & mask_], v);
  return ticket;
}

void FlightRecorder::end(std::uint64_t ticket, CallState state) {
  // A change the publisher sees; an increment lost to a race only delays it to the next call.
  ends_.store(ends_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (ring_.empty()) return;
  Slot& slot = ring_[ticket & mask_];
  if (slot.word[ticket_w].load(std::memory_order_relaxed) != ticket) return;  // overwritten since
  // Only the two words that change, behind the guard.
  const std::uint64_t ended = CallClock::now();
  const std::uint64_t g = slot.guard.load(std::memory_order_relaxed);
  slot.guard.store(g + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const std::uint64_t group_state = slot.word[group_state_w].load(std::memory_order_relaxed);
  slot.word[ended_w].store(ended, std::memory_order_relaxed);
  slot.word[group_state_w].store(
      (group_state & ~std::uint64_t{0xFF}) | static_cast<std::uint8_t>(state),
      std::memory_order_relaxed);
  slot.guard.store(g + 2, std::memory_order_release);
}

void FlightRecorder::retire_numbers(std::uint32_t group, const std::string& key) {
  ends_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(groups_mutex_);
    groups_.at(group).second = key;
  }
  for (Slot& slot : ring_) {
    auto v = read(slot);
    if (v[ticket_w] == 0 || (v[group_state_w] >> 8) != group) continue;
    v[seq_w] = 0;
    write(slot, v);
  }
}

std::vector<CallRecord> FlightRecorder::last(std::size_t n) const {
  std::vector<CallRecord> out;
  if (ring_.empty()) return out;
  const std::uint64_t newest = next_ticket_.load(std::memory_order_acquire);
  const std::uint64_t count = std::min<std::uint64_t>({n, ring_.size(), newest});
  std::lock_guard lock(groups_mutex_);
  const auto clock = clock_.reading();
  for (std::uint64_t t = newest - count + 1; count > 0 && t <= newest; ++t) {
    const auto v = read(ring_[t & mask_]);
    if (v[ticket_w] != t) continue;  // being written for a newer call, or not yet
    CallRecord r;
    std::memcpy(static_cast<void*>(&r.call), &v[desc0], sizeof r.call);
    r.seq = v[seq_w];
    const auto& [name, key] = groups_.at(v[group_state_w] >> 8);
    r.group = name;
    r.group_key = key;
    r.state = static_cast<CallState>(v[group_state_w] & 0xFF);
    r.posted_us = clock.wall_us(v[posted_w]);
    r.ended_us = clock.wall_us(v[ended_w]);
    r.chain = v[chain_w];
    out.push_back(std::move(r));
  }
  return out;
}

std::uint64_t FlightRecorder::version() const {
  return next_ticket_.load(std::memory_order_relaxed) + ends_.load(std::memory_order_relaxed);
}

}  // namespace dist::core
