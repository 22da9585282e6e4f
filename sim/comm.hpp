// A communicator of the simulated fabric: the members of a group, their collective sequence
// numbers, the collectives still gathering arrivals and the unmatched point-to-point calls.
#pragma once

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

struct Comm {
  std::uint64_t id = 0;
  std::string name;          // "world", "node 1", "group {0, 2}"
  std::vector<int> members;  // global ranks in group-rank order
  // By group rank, each on a cache line of its own: every rank bumps its own on every collective.
  struct alignas(64) NextSeq {
    std::uint64_t value = 1;
  };
  std::vector<NextSeq> next_seq;
  // The collectives still gathering arrivals, sorted by sequence number (usually a few: a vector
  // keeps posting free of allocations), and the gate that guards them and their ops' arrivals
  // (calls, arrived, arrived_count) until every participant has arrived. Ranks post collectives
  // through the gate alone (world.cpp); both share a cache line of their own.
  struct alignas(64) Gathering {
    SpinLock gate;
    std::vector<std::pair<std::uint64_t, std::shared_ptr<Op>>> ops;
  };
  Gathering gathering;
  // Unmatched p2p ops by (src, dst, tag) in group ranks, oldest first.
  using Channel = std::tuple<int, int, int>;
  std::map<Channel, std::deque<std::shared_ptr<Op>>> unmatched_sends;
  std::map<Channel, std::deque<std::shared_ptr<Op>>> unmatched_recvs;
};

}  // namespace dist::sim
