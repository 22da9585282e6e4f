// The arrival check real backends run before connecting a group: every member
// marks itself in the store and waits for the others, so a rank that never
// comes is named instead of hanging a connect.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/store/store.hpp"
#include "dist/export.hpp"

namespace dist::core {

// Sets "joined/<rank>" (`rank` is the caller's group rank) and waits until
// every member of the group (`global_ranks`, its world ranks in group order)
// has. Past `timeout` it raises TimeoutError("<who>: rank(s) <world ranks> did
// not join the <group> within <timeout> ms
// (<hint>)") carrying the missing world ranks.
DIST_API void wait_for_members(Store &store, const std::vector<int> &global_ranks, int rank,
                               std::chrono::milliseconds timeout, const std::string &who,
                               const std::string &group, const std::string &hint);

}  // namespace dist::core
