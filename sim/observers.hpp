// What watches a run: its trace (Cluster::trace) and the network model's predictor
// (Cluster::network). The fabric tells them of each call as it goes (posted, all arrived, ended,
// waited) and they keep what they learn: the trace its records, the predictor each rank's
// predicted clock. Neither changes a call's outcome. The predictor's clocks also time the calls
// (their start and end in a predicting run) and order the deterministic scheduler's ranks
// (scheduler.cpp runs the rank with the earliest).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "dist/sim/run.hpp"
#include "sim/op.hpp"
#include "sim/predictor.hpp"
#include "sim/trace.hpp"

namespace dist::sim {

class Observers {
 public:
  // `cluster` outlives the observers (the predictor keeps it): the World's own copy.
  explicit Observers(const Cluster& cluster) {
    if (!cluster.trace.empty()) trace_.emplace(cluster.trace_ranks, cluster.world_size());
    if (cluster.network) predictor_ = std::make_unique<model::Predictor>(cluster);
  }

  bool tracing() const { return trace_.has_value(); }
  // Whether a call needs its start time (a trace or a prediction records it).
  bool timing() const { return trace_ || predictor_; }
  // The network model's predictor of a predicting run, else null.
  model::Predictor* predictor() const { return predictor_.get(); }

  // `rank` posted `call`, its side of `op`.
  void posted(int rank, const Op& op, const Call& call) {
    if (predictor_) predictor_->on_posted(rank, op, call);
  }
  // Every participant of `op` has arrived.
  void all_arrived(Op& op) {
    if (predictor_) predictor_->on_all_arrived(op);
  }
  // `op` ended (done, or failed with op.error) at end_time() (asked only when traced: a clock
  // read).
  template <class EndTime>
  void ended(const Op& op, EndTime&& end_time) {
    if (trace_) trace_->record_op(op, end_time(), outcome_of(op.error));
  }
  // Participant `index` arrived at `op` after it had failed.
  template <class EndTime>
  void joined_failed(const Op& op, std::size_t index, EndTime&& end_time) {
    if (trace_) trace_->record_one(op, index, end_time(), outcome_of(op.error));
  }
  // A wait of `rank`: wait_started before it, waited once `op` is done.
  double wait_started(int rank) const { return predictor_ ? predictor_->clock(rank) : 0; }
  void waited(int rank, const Op& op, double started) {
    if (predictor_) predictor_->on_waited(rank, op, started);
  }
  // Writes the trace to `path` (nothing without a trace).
  void write_trace(const std::string& path) const {
    if (trace_) trace_->write(path);
  }

 private:
  std::optional<Trace> trace_;
  std::unique_ptr<model::Predictor> predictor_;
};

}  // namespace dist::sim
