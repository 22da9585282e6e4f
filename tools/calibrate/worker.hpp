// The measuring side of dist_calibrate: each process of the launched world (gloo under distrun,
// mpi under mpirun) times the collectives; rank 0 prints a line per point and writes the results.
#pragma once

#include <string>
#include <vector>

namespace dist::calibrate {

struct WorkerArgs {
  std::string backend = "gloo";  // gloo (launcher pytorch) or mpi (launcher mpi)
  std::vector<double> sizes;     // nccl-tests sizes in bytes
  double min_time_s = 0.1;       // per point
  double timeout_s = 120;        // the process group's timeout: no collective blocks longer
  std::string result;            // rank 0 writes the measurements here
};

// Runs in a launched process: init_dist, every collective at every size, destroy_dist.
// Returns the process's exit status.
int run_worker(const WorkerArgs& args);

}  // namespace dist::calibrate
