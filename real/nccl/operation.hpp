// What each wait of the nccl backend is for: the operation's name in errors, and whom it can blame
// when it times out or a peer fails. Collectives (and new_group) are numbered per group by a
// counter that send/recv never advance, so every member calls collective #n alike and answers the
// same roll-call key; a p2p call blames its peer and has no roll call.
#pragma once

#include <cstdint>
#include <string>

namespace dist::real {

struct Operation {
  std::string name;              // "all_reduce #3", "send #2 to group rank 1"
  std::uint64_t collective = 0;  // the group's collective number; 0: not a collective
  int peer = -1;                 // a p2p call's peer as a world rank; -1: none
  // The same operation (same roll call, same peer) named with `detail` appended.
  Operation with(const std::string& detail) const { return {name + detail, collective, peer}; }
};

// Numbers one group's operations, on every member alike for the calls every member makes.
class OperationCounter {
 public:
  // "all_reduce #4": the next collective number (collectives, barrier, new_group).
  Operation collective(const std::string& kind);
  // "send #2 to group rank 1" (kind "send") or "recv #2 from group rank 1": the next p2p number;
  // the collective number stays as it is.
  Operation p2p(const std::string& kind, int group_peer, int world_peer);

 private:
  std::uint64_t collectives_ = 0;
  std::uint64_t p2p_ = 0;
};

// The roll-call key of `op` on the communicator keyed `comm_key` ("nccl/world"):
// "<comm_key>/collective <n>", the same on every member whatever `op`'s name says; empty for an
// operation that is not a collective (a p2p call blames its peer; setup has no roll call).
std::string roll_call_key(const std::string& comm_key, const Operation& op);

}  // namespace dist::real
