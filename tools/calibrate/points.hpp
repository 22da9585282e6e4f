// dist_calibrate's measurements: one timed collective per point (its buffers and its call), and
// their JSON file (written by dist_calibrate --measurements, read back by --from and by
// predict_accuracy).
#pragma once

#include <string>
#include <vector>

namespace dist::calibrate {

// The collectives measured, by the names dist::sim::estimate takes.
inline const std::vector<std::string>& kinds() {
  static const std::vector<std::string> k{"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                          "all_to_all"};
  return k;
}

struct Point {
  std::string kind;
  int ranks = 0;
  double bytes = 0;  // nccl-tests' size: the buffer (all_reduce, broadcast), the whole output
                     // (all_gather), the whole input (reduce_scatter), a rank's buffer (all_to_all)
  double us = 0;     // per call, the slowest rank's, in the fastest of the timed batches
  long long calls = 0;
};

struct Measurements {
  std::string backend;
  int cores = 0;         // of the machine that measured
  std::string measured;  // when (UTC, ISO 8601)
  std::vector<Point> points;
  double handover_us = 0;  // measure_handover_us's figure on it (0: not measured)
  double node_copy_gbps = 0;  // measure_node_copy_gbps's with a thread per core (0: not measured)
};

// Float32 elements of each rank's input and output for `kind` at nccl-tests `size` on `ranks`
// ranks: at least one per rank, so tiny sizes round up (Point::bytes records the size used).
struct Shape {
  std::size_t in = 0, out = 0;
  double bytes = 0;
};
Shape shape_of(const std::string& kind, double size, int ranks);
// One call of `kind` on the first elements of `in` and `out` (`s`'s counts), through dist's API:
// what dist_calibrate times on real processes and predict_accuracy predicts on sim ranks.
void call_collective(const std::string& kind, const Shape& s, std::vector<float>& in,
                     std::vector<float>& out);

void write_measurements(const std::string& path, const Measurements& m);
// InvalidArgument naming the file and what is wrong.
Measurements read_measurements(const std::string& path);

// Points whose ratio (model or prediction over measured) is within 0.75-1.33, per world size in
// the order the sizes first came: dist_calibrate's summary and predict_accuracy count alike.
struct WithinBand {
  struct Share {
    int ranks = 0, within = 0, points = 0;
  };
  std::vector<Share> shares;
  // Counts a point of `ranks` ranks; returns whether `ratio` is within.
  bool add(int ranks, double ratio);
};

// "8 B", "64 KiB", "32 MiB".
std::string size_text(double bytes);

}  // namespace dist::calibrate
