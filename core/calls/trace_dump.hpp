// Chrome-trace (Perfetto) JSON written once for sim's trace and the flight recorder's dump: one
// track per rank, one complete slice per call. The dump (DIST_FLIGHT_RECORDER=path) writes every
// rank's recorder in sim's schema, so a real job's last calls open beside a sim run's.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/calls/flight_recorder.hpp"
#include "dist/export.hpp"

namespace dist::core {

// One call on one rank's track. Times are microseconds from the trace's start.
struct TraceSlice {
  int rank = 0;
  std::string group;
  std::uint64_t seq = 0;
  std::string kind;  // the slice's name
  std::string call;  // the full call description
  std::size_t bytes = 0;
  double start_us = 0;
  double end_us = 0;
  std::string outcome;      // "ok" or what went wrong
  std::string state;        // the recorder's state (posted, completed, failed); empty: not written
  std::uint64_t flow = 0;   // p2p: shared by the send and its recv (0: none, or a collective)
  bool flow_start = false;  // p2p: the send side
  bool p2p = false;         // a p2p call without a flow arrow (the dump's sends and recvs)
};

// The trace's JSON text: a process named `process`, a track "rank N" for each of `tracks`, the
// slices (category "p2p" for p2p calls, else "collective") and a flow arrow from each completed
// send to its recv.
DIST_API std::string chrome_trace_json(const std::string& process, std::span<const int> tracks,
                                       std::span<const TraceSlice> slices);

struct RankRecords {
  int rank = 0;
  std::vector<CallRecord> records;
};

// Writes the ranks' records as one Chrome trace at `path` (a temporary file renamed into place),
// times from the earliest post; a call still posted lasts until the latest time in the file.
// InvalidArgument naming the path and the system's reason when it cannot be written.
DIST_API void write_call_trace(const std::string& path, const std::vector<RankRecords>& ranks);

// DIST_FLIGHT_RECORDER: where a failure writes the dump (empty: unset, nothing is written).
DIST_API std::string call_trace_path();

}  // namespace dist::core
