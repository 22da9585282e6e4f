// Fitting the network model to measured points: the terms of dist::sim::Network that minimize the
// squared log error of the model's time (dist::sim::estimate, the formulas predicting runs use)
// against the measured time.
#pragma once

#include <vector>

#include "dist/sim/network.hpp"
#include "tools/calibrate/points.hpp"

namespace dist::calibrate {

// The model's time for one measured point on `net` (one node of point.ranks ranks).
double model_us(const dist::sim::Network& net, const Point& point);

struct Fit {
  dist::sim::Network network;
  double rms_log_error = 0;  // sqrt(mean(log(model / measured)^2)) over the fitted points
  int points = 0;
};

// Fits intra.latency_us, intra.bandwidth_gbps, call_overhead_us, reduce_gbps, cache_bytes,
// memory_gbps, node_gbps and intra_factors (at messages of 1 KiB, 8 KiB, ... 32 MiB) of `start`
// (whose other fields, cores_per_node among them, are kept) to `points`, by Nelder-Mead over the
// logarithms of the thirteen terms. InvalidArgument when `points` is empty.
Fit fit_network(const dist::sim::Network& start, const std::vector<Point>& points);

}  // namespace dist::calibrate
