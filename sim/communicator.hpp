// A communicator of the simulated fabric: the members of a group, their collective sequence
// numbers, the collectives still gathering arrivals and the unmatched point-to-point calls.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/op.hpp"
#include "sim/spin.hpp"

namespace dist::sim {

// A communicator's collectives still gathering arrivals, by sequence number. Ranks post in
// order, so the numbers held are consecutive (an op is created by the first rank to post it,
// after every lower one) and the lowest is the first to have every arrival. The lowest is kept
// inline, on the gate's cache line: usually it is the only one.
class alignas(64) Gathering {
 public:
  SpinLock gate;

  bool empty() const { return !front_; }
  // The op for `seq`, or null.
  std::shared_ptr<Op>* find(std::uint64_t seq) {
    if (!front_ || seq < front_seq_) return nullptr;
    const std::uint64_t i = seq - front_seq_;
    if (i == 0) return &front_;
    return i - 1 < rest_.size() ? &rest_[i - 1] : nullptr;
  }
  // Adds the op for `seq`, one above every number held.
  std::shared_ptr<Op>& add(std::uint64_t seq, std::shared_ptr<Op> op) {
    if (!front_) {
      front_seq_ = seq;
      front_ = std::move(op);
      return front_;
    }
    rest_.push_back(std::move(op));
    return rest_.back();
  }
  // Removes the op for `seq` (held) and returns it.
  std::shared_ptr<Op> remove(std::uint64_t seq) {
    std::shared_ptr<Op> out;
    if (seq != front_seq_) {  // not expected (see above), but kept consistent
      const auto at = rest_.begin() + static_cast<std::ptrdiff_t>(seq - front_seq_ - 1);
      out = std::move(*at);
      rest_.erase(at);
      return out;
    }
    out = std::move(front_);
    if (!rest_.empty()) {
      front_ = std::move(rest_.front());
      rest_.erase(rest_.begin());
      ++front_seq_;
    }
    return out;
  }
  template <class F>
  void for_each(F&& f) const {
    if (!front_) return;
    f(front_);
    for (const auto& op : rest_) f(op);
  }
  void clear() {
    front_.reset();
    rest_.clear();
  }

 private:
  std::uint64_t front_seq_ = 0;
  std::shared_ptr<Op> front_;
  std::vector<std::shared_ptr<Op>> rest_;  // front_seq_ + 1, + 2, ...
};

struct Communicator {
  std::uint64_t id = 0;
  std::string name;          // "world", "node 1", "group {0, 2}"
  std::vector<int> members;  // global ranks in group-rank order
  bool sorted = false;       // members ascending (most groups): found by binary search
  // The group rank of global rank `rank`, or -1 when it is not a member.
  int group_rank_of(int rank) const {
    const auto at = sorted ? std::lower_bound(members.begin(), members.end(), rank)
                           : std::find(members.begin(), members.end(), rank);
    return at != members.end() && *at == rank ? static_cast<int>(at - members.begin()) : -1;
  }
  // Each member's next sequence number, by group rank: every rank bumps its own on every
  // collective. Ranks running at once keep theirs on cache lines of their own; one rank at a time
  // (deterministic mode) packs 8 to a line, so that a large world's counters mostly stay cached
  // (an eighth of the memory of a line each).
  class SeqCounters {
   public:
    void assign(std::size_t members, bool own_lines) {
      stride_ = own_lines ? 64 / sizeof(std::uint64_t) : 1;
      values_.assign(members * stride_, 1);
    }
    std::uint64_t& operator[](std::size_t group_rank) { return values_[group_rank * stride_]; }

   private:
    std::vector<std::uint64_t> values_;
    std::size_t stride_ = 1;
  };
  SeqCounters next_seq;
  // The collectives still gathering arrivals, and the gate that guards them and their ops'
  // arrivals (calls, arrived) until every participant has arrived. Ranks post collectives
  // through the gate alone (matcher.cpp).
  Gathering gathering;
  // Unmatched p2p ops by (src, dst, tag) in group ranks, oldest first.
  using Channel = std::tuple<int, int, int>;
  std::map<Channel, std::deque<std::shared_ptr<Op>>> unmatched_sends;
  std::map<Channel, std::deque<std::shared_ptr<Op>>> unmatched_recvs;
  // Unmatched receives from any_source by (dst, tag), oldest first (Op::any_source).
  using Inbox = std::pair<int, int>;
  std::map<Inbox, std::deque<std::shared_ptr<Op>>> any_source_recvs;
  // f(op) for every unmatched p2p op above (under the fabric's lock).
  template <class F>
  void for_each_unmatched(F&& f) const {
    for (const auto* queues : {&unmatched_sends, &unmatched_recvs})
      for (const auto& [key, queue] : *queues)
        for (const auto& op : queue) f(op);
    for (const auto& [key, queue] : any_source_recvs)
      for (const auto& op : queue) f(op);
  }
  // The members (global ranks) that left it, in order: by dist::abort, or killed by a
  // Fault::restart. Written under the fabric's lock and the gate, so either guard reads it.
  // Nothing is posted for them again (the front end refuses an aborted group's calls, and a
  // killed process's calls end it again); their peers' calls fail naming them (World::leave).
  struct Departure {
    int rank;
    std::string why;  // what the rank's own calls then say
    std::string how;  // what its peers' errors say it did: "aborted world (dist::abort)"
  };
  std::vector<Departure> aborted_by;
  bool aborted(int global_rank) const { return departure(global_rank) != nullptr; }
  const Departure* departure(int global_rank) const {
    for (const auto& d : aborted_by)
      if (d.rank == global_rank) return &d;
    return nullptr;
  }
  const std::string* aborted_reason(int global_rank) const {
    const Departure* d = departure(global_rank);
    return d ? &d->why : nullptr;
  }
  // dist::reconfigure's rounds (sim/membership.cpp) wait on an op of a communicator of their own,
  // which nothing is posted to: its name says which membership the round leaves, and its members
  // are the round's participants by global rank (the rank when awaited or come, else -1).
  bool rendezvous = false;
  // Set when shrink_group's survivors made it from lists that differ (World::shrunk_comm): every
  // call on it fails with this DesyncError's text. Under the fabric's lock and the gate.
  std::string desync;
};

}  // namespace dist::sim
