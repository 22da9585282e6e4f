// What a collective that failed tells every rank, as sim would. On a timeout the ranks that
// reached the call answer a roll call in the store with their call (bounded by the roll-call
// window); calls that differ (those answers, and the calls the absent ranks last published)
// raise DesyncError naming the field and each rank's call; otherwise the absent ranks are
// described from the status their publisher keeps in the store ("rank 3 completed call #4
// (barrier()) 12.3 s ago and has not called since; ranks 0-2 wait in call #5 (...)").
#pragma once

#include <string>

#include "core/calls/call_log.hpp"

namespace dist::core {

// Throws the diagnosis of `mine` (this rank's record of the call) timing out: DesyncError, or a
// TimeoutError naming the absent ranks. `detail` is the backend's own message, kept at the end.
[[noreturn]] void diagnose_timeout(const GroupSite& site, const CallRecord& mine,
                                   const std::string& detail);

// After `failed` (a world rank) was lost in the call `mine`: throws DesyncError when the
// survivors' calls, or the call `failed` last published for it, differ (a rank that left after
// a call which could not match); returns otherwise, and the failure stands.
void diagnose_failure(const GroupSite& site, const CallRecord& mine, int failed);

// How ranks that did not answer are described ("rank 3 completed call #4 (barrier()) 1.2 s ago
// and has not called since"), from the first one's published records (newest last; none: it
// never published). `group` is the failed call's group key and `current_seq` its number there
// (0: unknown); a record older than the calls that completed with these ranks since is stated as
// such ("last heard of in call #35 ..."). `now_us` on the wall clock; `where` follows the ranks
// (" on host1").
std::string describe_absent(const std::vector<int>& ranks, const std::vector<CallRecord>& records,
                            const std::string& group, std::int64_t now_us,
                            std::uint64_t current_seq = 0, const std::string& where = "");

}  // namespace dist::core
