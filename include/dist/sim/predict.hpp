// Predicting a program's time on a network it does not run on (link dist::sim): the presets,
// explicit compute time, the report of a predicting run and the model's estimate for one call.
//
//   auto cluster = dist::sim::dgx_h100(128);          // 1,024 ranks, deterministic
//   dist::sim::Prediction prediction;
//   dist::sim::run(cluster, train_step, prediction);    // the program runs, with its checks
//   std::cout << prediction.summary();                  // predicted step time, by call kind
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dist/sim/network.hpp"
#include "dist/sim/run.hpp"

namespace dist::sim {

// Presets: a deterministic Cluster of `nodes` nodes with the network of a known system.
// docs/prediction.md lists each figure and its source.
// 8 H100 GPUs per node on NVLink 4 (450 GB/s per direction) with NVLink SHARP, 8 × 400 Gb/s NICs.
DIST_API Cluster dgx_h100(int nodes);
// 8 A100 GPUs per node on NVLink 3 (300 GB/s per direction), 8 × 200 Gb/s HDR InfiniBand NICs.
DIST_API Cluster a100_hdr(int nodes);
// `ranks` ranks on this machine, with the network dist_calibrate measured and wrote to `profile`
// ("" reads the path from $DIST_NETWORK_PROFILE); InvalidArgument saying how to make one when
// there is none.
DIST_API Cluster this_machine(int ranks, const std::string& profile = "");

// Adds `duration` of compute to the calling rank's predicted clock (as SMPI's explicit compute
// time), whatever Network::compute_scale is. InvalidArgument when negative; outside a predicting
// run (no network, or not a sim rank) it does nothing, so the same code runs anywhere.
DIST_API void advance(std::chrono::nanoseconds duration);

// The calling rank's clock, like SMPI's MPI_Wtime: its predicted time in a predicting run,
// otherwise the steady clock, so the same code times a real run too.
DIST_API std::chrono::duration<double, std::micro> now();

// Time in one kind of call on one group, seen by one rank.
struct CallTime {
  std::string kind;   // "all_reduce", "send", "all_to_all_v", ...
  std::string group;  // "world", "{0, 8, 16}", ...
  int calls = 0;
  double bytes = 0;       // this rank's buffer bytes over those calls
  double blocked_us = 0;  // the rank's clock spent inside these calls (or waiting on their Works)
  double late_peers_us = 0;  // of which: waiting for participants that arrived later
};

// One rank's predicted time.
struct RankPrediction {
  int rank = 0;
  double total_us = 0;          // its clock when its function returned
  double compute_us = 0;        // compute between calls (measured × compute_scale, plus advance())
  double comm_us = 0;           // blocked in communication
  double late_peers_us = 0;     // of comm_us: waiting for peers that arrived later
  std::vector<CallTime> calls;  // by kind and group, in order of first call
};

// The report of a predicting run (Cluster::network set).
struct DIST_API Prediction {
  std::string network;  // Network::name
  std::vector<RankPrediction> ranks;
  // The predicted time of the run: the latest rank's total.
  double step_us() const;
  // The rank that finished last (the critical path's end), or -1 when empty.
  int slowest_rank() const;
  // A few lines: the predicted step time, compute and communication of the slowest rank, its
  // time per call kind, and the waiting caused by late peers.
  std::string summary() const;
};

// The model's time for one collective of `bytes` per rank (the buffer of all_reduce; the input
// of all_gather; the output of reduce_scatter; ...) on `ranks` (global ranks of `cluster`; empty:
// the whole world), with the algorithm it chose ("ring", "tree", "nvls", "chain", "pairwise",
// "linear", "direct"). `kind` is a collective's name ("all_reduce", "barrier", ...) or "send";
// InvalidArgument for an unknown kind, a cluster without a network or ranks outside it.
struct Estimate {
  double us = 0;
  std::string algorithm;
  // Per call when the same call repeats back to back, as benchmarks time it: a broadcast's chain
  // overlaps as a pipeline (each call costs a rank its overhead and the transfer; a predicting run
  // times each rank of the chain); the others cost `us` each.
  double back_to_back_us = 0;
};
DIST_API Estimate estimate(const Cluster& cluster, std::string_view kind, std::size_t bytes,
                           const std::vector<int>& ranks = {});

namespace detail {
DIST_API void run_predicting(const Cluster& cluster, const std::function<void(int)>& body,
                             Prediction& prediction);
}  // namespace detail

// Runs fn() on every rank of `cluster` (which must have a network and the deterministic
// schedule) and fills `prediction`; returns fn's results as run() does. When a rank fails the
// RunError is thrown and `prediction` holds what was predicted up to then.
template <class F>
auto run(const Cluster& cluster, F&& fn, Prediction& prediction) {
  return detail::run_collecting(cluster, fn, [&](const std::function<void(int)>& body) {
    detail::run_predicting(cluster, body, prediction);
  });
}

}  // namespace dist::sim
