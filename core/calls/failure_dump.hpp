// DIST_FLIGHT_RECORDER=path on a failed call: every rank that diagnoses it shares its whole
// recorder through the store before the roll call, and the lowest of them writes every rank's
// calls (the absent ranks' as they last published them) as one Chrome trace (trace_dump.hpp).
#pragma once

#include <chrono>
#include <vector>

#include "core/calls/call_log.hpp"

namespace dist::core {

// Puts this rank's recorder in the store (when a dump is asked for).
void share_recorder(const GroupSite& site, std::chrono::milliseconds budget);

// On the lowest of `present` (sorted world ranks that answered): writes the trace. A path that
// cannot be written is said on stderr; the diagnosis goes on.
void write_failure_dump(const GroupSite& site, const std::vector<int>& present,
                        const std::vector<int>& absent,
                        const std::vector<std::vector<CallRecord>>& published,
                        std::chrono::milliseconds budget);

}  // namespace dist::core
