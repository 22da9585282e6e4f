// The Works of the calls the call layer records, and how it explains a failed one. A call still
// in flight gets a decorator of its backend's Work: waiting ends its record in the flight
// recorder and explains a failure as the call itself would have.
#pragma once

#include <cstdint>
#include <memory>

#include "core/calls/call.hpp"
#include "core/calls/call_log.hpp"
#include "dist/api.hpp"

namespace dist::core {

// The exception being handled, explained and rethrown with the call in front: a collective's
// timeout the backend could not pin on a peer, or a lost peer, gets the diagnosis of
// diagnosis.hpp; a DesyncError the backend found gets the call's number; a p2p call's (seq 0)
// passes as it is.
[[noreturn]] void explain_failure(const GroupSite& site, const CallDesc& call, std::uint64_t seq);

// The Work of a call that completed inside the call (gloo's collectives do): it still names the
// call, for a Work the user never waits (core/work_ledger.hpp).
Work finished_call(std::shared_ptr<const GroupSite> site, std::uint64_t seq, const CallDesc& call);

// `work` (a call in flight, recorded under `ticket`) wrapped so that waiting ends its record;
// `group`: the call layer a numbered collective was called on (WorkState::collective_of), else
// null.
Work recorded_call(const Work& work, std::shared_ptr<const GroupSite> site, std::uint64_t ticket,
                   std::uint64_t seq, const CallDesc& call, const void* group);

}  // namespace dist::core
