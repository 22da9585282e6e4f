// The network model inside a deterministic run: every rank's predicted clock, the modeled start
// and end of each op, and the report of where each rank's time went. Ranks run one at a time
// (the deterministic scheduler), and the scheduler runs the ready rank with the earliest clock,
// so the run proceeds in predicted time like a discrete-event simulation.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dist/sim/predict.hpp"
#include "model/cost.hpp"
#include "model/links.hpp"
#include "sim/op.hpp"

namespace dist::sim::model {

class Predictor {
 public:
  explicit Predictor(const Cluster& cluster);  // cluster.network is set

  // The rank runs user code from now on (its CPU time is measured) / stops (the CPU time since
  // counts, times Network::compute_scale).
  void resume(int rank);
  void pause(int rank);
  // Compute time added explicitly (dist::sim::advance, a stall fault).
  void add_compute(int rank, double us);
  double clock(int rank) const { return ranks_[static_cast<std::size_t>(rank)].now; }

  // Every participant of `op` has arrived (each call's start_us is its arrival): sets the op's
  // modeled start (the last arrival) and end.
  void on_all_arrived(Op& op);
  // `rank` posted `call`, its side of `op`: kept until its wait, which then need not search a
  // large op's participants for the rank.
  void on_posted(int rank, const Op& op, const Call& call);
  // `rank` got past its wait on `op` (done), which it entered at clock `entered_us`.
  void on_waited(int rank, const Op& op, double entered_us);

  // Ready ranks by clock, for the scheduler (the earliest first; ties by rank).
  void set_ready(int rank, bool ready);
  int earliest_ready() const { return ready_.begin()->second; }

  Prediction report() const;

 private:
  // Each participant's start and end of broadcast `op` along its chain (predictor.cpp).
  void time_chain(Op& op, const ChainParts& chain);
  struct Entry {
    std::uint64_t comm = 0;
    std::string_view kind;
    int calls = 0;
    double bytes = 0, blocked_us = 0, late_us = 0;
  };
  // A posted call not yet waited: its op (the pointer and its number, as ops are recycled), when
  // the rank posted it, its bytes and its kind for the report.
  struct Posted {
    const Op* op = nullptr;
    std::uint64_t number = 0;
    double start_us = 0, bytes = 0;
    std::string_view kind;
  };
  struct RankClock {
    double now = 0;
    double compute_us = 0, comm_us = 0, late_us = 0;
    double resumed_cpu_us = 0;  // the thread's CPU time when it resumed
    bool running = false;
    bool ready = false;
    double ready_key = 0;
    std::vector<Entry> entries;
    std::vector<Posted> posted;
  };
  void rekey(int rank);
  double size_of(const Op& op) const;  // the op's size as nccl-tests counts it

  const Cluster& cluster_;
  const Network& net_;
  Links links_;
  std::vector<RankClock> ranks_;
  std::set<std::pair<double, int>> ready_;
  std::unordered_map<std::uint64_t, std::string> group_names_;  // by communicator id
  std::unordered_map<std::uint64_t, Placement> placements_;     // by communicator id
};

// The report's name for an op's kind: a p2p op that carries an all_to_all's pieces is named after
// it.
std::string_view report_kind(const Call& call);

}  // namespace dist::sim::model
