// The cross-check without a round trip: a mismatch whose calls complete (same bytes, another
// dtype, op or root) never times out, so every rank's publisher compares its recent calls with a
// peer's published ones (the group's hash chains, then the calls), and a divergence found is a
// DesyncError every rank raises at its next call (CallLog::cross_check).
#pragma once

#include <string>
#include <vector>

#include "core/calls/flight_recorder.hpp"

namespace dist::core {

// Where rank `me`'s calls and rank `peer`'s (each oldest first) first differ, as DesyncError text
// (the first call of a group whose chains differ that both hold); empty when they agree wherever
// both hold a group's call.
std::string find_divergence(const std::vector<CallRecord>& mine, int me,
                            const std::vector<CallRecord>& theirs, int peer);

}  // namespace dist::core
