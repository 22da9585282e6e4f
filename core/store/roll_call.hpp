// Who never arrived at a collective that timed out or failed without naming a peer. The real
// backends cannot see that themselves (gloo and NCCL only report that a peer did not answer), so
// every member whose call ended that way answers a roll call in the store, and the members that
// do not answer within a window are the ones that never arrived.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/store/store.hpp"
#include "dist/export.hpp"

namespace dist::core {

struct RollCall {
  std::vector<int> absent;  // the members (world ranks) that did not answer, in group order
  bool complete = true;     // false: the store failed (its host may be gone), `absent` is partial
  // The store's host (another process) did not answer within the window: it is frozen or hung,
  // and `absent` names it alone, since the others could not be heard.
  bool host_unresponsive = false;
  // Then, what a fresh connection to that host found (Store::reach_host): a stopped process, one
  // that exited, or a host cut off.
  Store::HostReach host_reach = Store::HostReach::unknown;
};

// How long the real backends wait for answers after a failed collective: 3 s, or the group's
// timeout when shorter.
DIST_API std::chrono::milliseconds roll_call_window(std::chrono::milliseconds timeout);

// Answers the roll call `key` (one key per failed collective: the group's store prefix and the
// collective's sequence number) as world rank `me`, then waits up to `window` for the other
// `members` (world ranks) to answer; returns early once all have. A member that reaches the
// collective more than `window` after this one times out is counted absent too. Each poll is a
// bounded number of store requests whatever the group's size, so it ends within about two
// windows.
// `answer` is the value this rank answers with; roll_call_answer_key names where a member's is.
DIST_API RollCall roll_call(Store& store, const std::string& key, const std::vector<int>& members,
                            int me, std::chrono::milliseconds window, const Bytes& answer = {});
DIST_API std::string roll_call_answer_key(const std::string& key, int rank);

}  // namespace dist::core
