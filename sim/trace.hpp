// The trace of a run: one record per rank per call (group, seq, kind, bytes, start, end, outcome),
// written as Chrome-trace JSON with one track per rank and flow arrows from sends to receives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/op.hpp"

namespace dist::sim {

struct TraceRecord {
  int rank = 0;
  std::string group;
  std::uint64_t seq = 0;
  std::string kind;
  std::string call;  // the full call description
  std::size_t bytes = 0;
  double start_us = 0;
  double end_us = 0;
  std::string outcome;     // "ok" or the error class
  std::uint64_t flow = 0;  // p2p: shared by the send and its recv (0 for collectives)
  bool flow_start = false; // p2p: the send side
};

class Trace {
 public:
  // Records every arrived participant of `op` ending now with `outcome`.
  void record_op(const Op& op, double end_us, const std::string& outcome);
  // Records one participant of op (e.g. a late arrival at an op that had already failed).
  void record_one(const Op& op, std::size_t index, double end_us, const std::string& outcome);
  // Writes the Chrome-trace JSON; throws dist::Error when the file cannot be written.
  void write(const std::string& path, int world_size) const;
  const std::vector<TraceRecord>& records() const { return records_; }

 private:
  std::vector<TraceRecord> records_;
};

// The error class name of an exception ("DesyncError", ...), for outcomes.
std::string outcome_of(const std::exception_ptr& error);

}  // namespace dist::sim
