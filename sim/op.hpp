// What the fabric matches: a Call is one rank's side of an operation (its fingerprint and its
// buffers); an Op is one matched instance (a collective on a communicator, or a send/recv pair).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/calls/call.hpp"
#include "dist/types.hpp"

namespace dist::sim {

// The operation kinds and the fingerprint fields are core's (core/calls/call.hpp), so sim's
// errors read like the real backends'.
using OpKind = core::CallKind;

// Cache-line aligned: each rank writes its own call in an op while the others read theirs. The
// fingerprint fields every call sets come first (the base), on one line; the rare ones after.
// `root` is the peer (group rank) of send/recv; `count` the per-rank element count every
// participant must agree on.
struct alignas(64) Call : core::CallDesc {
  const void* in = nullptr;
  void* out = nullptr;
  double start_us = 0;  // when the rank posted it (set only when tracing)
  // new_group's rank list (every participant's is the same: those that agree with the first
  // arrival's share it, so a world-sized new_group holds one list, not one per rank), or a
  // layout's own list (split_groups); null for other calls.
  std::shared_ptr<const std::vector<int>> split_ranks;
  std::vector<std::size_t> counts;    // all_gather_v's per-rank counts
  std::string injected_failure;  // set by a Fault::fail: the op fails with this message

  // e.g. "all_reduce(op=sum, float32 x 8)".
  std::string describe() const { return core::describe(*this, ranks(), counts); }
  std::span<const int> ranks() const {
    return split_ranks ? std::span<const int>(*split_ranks) : std::span<const int>();
  }
  // Takes `other`'s fields, writing the rare ones only when either side has any: an op's call
  // slot is reused, and its other lines then stay untouched.
  void take(Call&& other);
};

// Two cache lines: an op holds one call per participant, so this is sim's memory per rank pair.
static_assert(sizeof(Call) <= 128, "sim::Call grew past two cache lines");

// The first fingerprint field where two ranks' calls differ, or empty when they agree.
std::string_view differing_field(const Call& a, const Call& b);

struct Communicator;

struct Op;

// How an Op's data movement is split into chunks that any waiting rank may execute: run(op, c)
// executes chunk c of `op`, reading the calls in place. The plans keep their captures within
// std::function's inline storage, so making one allocates nothing (all_gather_v aside).
struct Plan {
  std::size_t chunks = 0;
  std::function<void(const Op&, std::size_t)> run;
};

// Which participants of an op have arrived: a bit mask for up to 64 of them (kept on the op's
// state line, which the last arrival writes anyway), bytes beyond that.
class Arrivals {
 public:
  void reset(std::size_t n) {
    n_ = n;
    count_ = 0;
    mask_ = 0;
    if (n > 64) wide_.assign(n, 0);
  }
  bool operator[](std::size_t i) const { return n_ <= 64 ? (mask_ >> i) & 1u : wide_[i] != 0; }
  void mark(std::size_t i) {
    if (count_ == 0) first_ = i;
    if (n_ <= 64)
      mask_ |= std::uint64_t{1} << i;
    else
      wide_[i] = 1;
    ++count_;
  }
  std::size_t size() const { return n_; }
  std::size_t count() const { return count_; }
  std::size_t first() const { return first_; }  // the first to arrive (count() > 0)

 private:
  std::uint64_t mask_ = 0;
  std::size_t n_ = 0;
  std::size_t count_ = 0;
  std::size_t first_ = 0;
  std::vector<char> wide_;
};

struct Op {
  // gathering -> ready (chunks to run) -> done; gathering -> done (ran inline); gathering or
  // ready -> failing (the one failer writes the error) -> failed. Transitions are compare-and-
  // swaps: completing and failing may race (a timeout as the last rank arrives).
  enum class State : std::uint8_t { gathering, ready, done, failing, failed };

  // The first line changes only when a recycled op serves another communicator (op_pool.cpp
  // writes a field only when it differs), so every participant keeps it cached.
  std::shared_ptr<Communicator> comm;
  std::uint64_t id = 0;  // unique within the run (p2p: also their order of posting)
  bool p2p = false;
  // A receive from any_source: pair[0] (its sender) is -1 until a send matches it, when `source`
  // is set too (under the fabric's lock, before the op completes).
  bool any_source = false;
  // Global ranks; collectives: by group rank (a view of comm->members); p2p: {src, dst} (pair).
  std::span<const int> participants;
  std::array<int, 2> pair{};
  int source = -1;  // p2p: the sender's group rank (-1: an any_source recv not matched yet)
  // Guarded by comm->gathering.gate (collectives) or the fabric's lock (p2p) until every
  // participant has arrived; read-only after that. Each call is on lines of its own.
  std::vector<Call> calls;  // by participant index

  // On a cache line of its own, with the arrivals (same guard as the calls): waiters poll the
  // state, and an arriving rank that completes the op writes both.
  alignas(64) std::atomic<State> state{State::gathering};
  std::uint64_t seq = 0;  // per-communicator sequence number (collectives)
  Arrivals arrived;
  std::exception_ptr error;  // set before state becomes failed
  // Set only for an op whose chunks other ranks may run (small ones run on the last arrival).
  alignas(64) Plan plan;
  std::atomic<std::size_t> next_chunk{0};
  std::atomic<std::size_t> done_chunks{0};
  // The network model's start (its last arrival) and end of the op, in predicted microseconds;
  // for a chain (broadcast), each participant's own, by index: the root goes on once its data has
  // left, and each rank down the chain once the data has passed it (empty: all share the op's).
  double model_start_us = 0, model_end_us = 0;
  std::vector<double> model_starts, model_ends;
  std::shared_ptr<Communicator> new_comm;  // the result of a split
  std::vector<std::shared_ptr<Communicator>>
      new_comms;               // split_groups': each participant's (or null)
  Op* shelved_next = nullptr;  // the next op on the pool's shelf of its size (op_pool.cpp)

  // Moves the op from gathering or ready (still open) to `to` (done or failing); false when
  // another rank closed it first.
  bool close(State to);
  // The index of global rank `rank` among the participants, or -1.
  int index_of(int rank) const;
  // "all_reduce(op=sum, float32 x 8) on world, #3" from participant i's point of view.
  std::string describe(std::size_t i) const;
  std::vector<int> missing() const;  // participants that have not arrived (known ones)
  // A monitored barrier's op (its calls carry monitored_barrier_tag): it ends at its waiters'
  // timeout, naming who did not come, rather than failing once sim proves someone never will.
  bool waits_to_timeout() const;
};

inline bool Op::close(State to) {
  auto s = state.load();
  do {
    if (s != State::gathering && s != State::ready) return false;
  } while (!state.compare_exchange_weak(s, to));
  return true;
}

// The tag of a monitored barrier's calls (a barrier has no tag otherwise).
inline constexpr std::int32_t monitored_barrier_tag = 1;

}  // namespace dist::sim
