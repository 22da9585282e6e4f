// dist::reconfigure's agreement where the ranks are processes (gloo, nccl): they agree on the
// next membership through the job's store, in rounds numbered apart from the epochs.
//
// A caller lands in the open round (the store's "elastic/round"), counts itself in and writes its
// record: its world rank, its restart count and the ranks it saw lost since its last agreement.
// A round closes once every member of the membership before it has come, except those known lost
// (a record names them, or a newer process of the same rank came). The caller that finds it
// complete writes the result (compare_set: the first result stands) with the processes that came,
// the newest per rank: the same epoch when they are the members, the next one otherwise. A caller
// that counted itself in after the result (it came late) goes on to the next round. A caller whose
// deadline passes first ends the round (the same compare_set): the callers it had counted get a
// TimeoutError naming the members that never came, later ones go on to the next round.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "core/store/store.hpp"
#include "dist/export.hpp"

namespace dist::core {

// A process of the job: its world rank and how many times that rank was restarted before it.
struct Incarnation {
  int rank = 0;
  int restart = 0;
  bool operator==(const Incarnation&) const = default;
};

// A membership: its epoch (0: the world as launched) and its processes, by ascending rank.
struct MembershipView {
  std::int64_t epoch = 0;
  std::vector<Incarnation> members;
  DIST_API std::vector<int> ranks() const;
};

// What a caller brings to a round.
struct Arrival {
  Incarnation me;
  std::vector<int> lost;  // world ranks its calls found lost since its last agreement
};

// Blocks until the round the caller lands in closes and returns the membership it agreed (which
// holds the caller). TimeoutError naming the members that never came when `timeout` passes first;
// Aborted when a newer process of the caller's rank took its place; BackendError on a corrupt
// record. `world_size` gives epoch 0: ranks 0..world_size-1, none restarted.
DIST_API MembershipView agree_membership(Store& store, int world_size, const Arrival& arrival,
                                         std::chrono::milliseconds timeout);

}  // namespace dist::core
