// The trace of a run: one record per rank per call (group, seq, kind, bytes, start, end, outcome),
// written as Chrome-trace JSON with one track per rank and flow arrows from sends to receives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/calls/trace_dump.hpp"
#include "sim/op.hpp"

namespace dist::sim {

// One rank's slice of one call; the JSON is core's (core/calls/trace_dump.hpp), shared with the
// flight recorder's dump.
using TraceRecord = core::TraceSlice;

class Trace {
 public:
  // Records the calls of `ranks` only (empty: every rank of the world).
  Trace(const std::vector<int>& ranks, int world_size);
  // Records every arrived participant of `op` ending now with `outcome`.
  void record_op(const Op& op, double end_us, const std::string& outcome);
  // Records one participant of op (e.g. a late arrival at an op that had already failed).
  void record_one(const Op& op, std::size_t index, double end_us, const std::string& outcome);
  // Writes the Chrome-trace JSON; throws dist::Error when the file cannot be written.
  void write(const std::string& path) const;
  const std::vector<TraceRecord>& records() const { return records_; }

 private:
  std::vector<TraceRecord> records_;
  std::vector<bool> traced_;  // by rank
};

// The error class name of an exception ("DesyncError", ...), for outcomes.
std::string outcome_of(const std::exception_ptr& error);

}  // namespace dist::sim
