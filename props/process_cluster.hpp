// The processes of a gloo_procs, nccl_procs or mpi_procs run (one test binary per rank, started by
// distrun, or by mpirun for mpi_procs):
// a control world (gloo) of all of them over the launcher's TCP store, through which each case
// opens its own world of the backend under test on the first k processes, and all processes
// exchange what happened and stay in step.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/store/store.hpp"
#include "dist/types.hpp"

namespace props::procs {

// The command that runs the suites of a rank per process (said when they skip outside distrun).
inline constexpr const char* how_to_run =
    "distrun -n 4 -- dist_props --gtest_filter='*/gloo_procs.*' (nccl_procs: one process per "
    "GPU; mpi_procs: mpirun -n 4 -x MASTER_ADDR=127.0.0.1 instead of distrun), with one "
    "RC_PARAMS=seed=N for every process; props/run_procs.sh does all three";

// Whether this process was started by a launcher: distrun (RANK and WORLD_SIZE are set) or
// mpirun (OMPI_COMM_WORLD_RANK is), and by mpirun in particular.
bool under_launcher();
bool under_mpirun();
// The launcher's number of processes (WORLD_SIZE, else OMPI_COMM_WORLD_SIZE; 0 outside one).
int launched_processes();

// Deadlines: of a case world's rendezvous and collectives, and of one exchange between the
// processes (which waits for the slowest process's case, itself bounded by run_on's watchdog).
inline constexpr std::chrono::milliseconds case_timeout{std::chrono::seconds(30)};
inline constexpr std::chrono::milliseconds control_timeout{std::chrono::seconds(120)};

class Cluster {
 public:
  // This process's cluster, connected on the first call (every process must make it); rethrows
  // the connection error on every later call once connecting failed.
  static Cluster& get();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Process 0's id (every process's scratch paths are named after it).
  long first_pid() const { return first_pid_; }

  // The next case's number (every process counts the same cases).
  std::uint64_t next_case() { return next_case_++; }

  // Process `rank()` (< k) joins case `id`'s `backend` world of k ranks (through its own key
  // prefix in the store), with local groups of `ranks_per_node` ranks as on a cluster of
  // k / ranks_per_node nodes; on nccl, process p runs on GPU p. Collective over the first k
  // processes.
  std::shared_ptr<dist::core::Context> open_case_world(dist::Backend backend, std::uint64_t id,
                                                       int k, int ranks_per_node);

  // Every process's `mine`, in process order (collective over all processes).
  std::vector<std::string> exchange(const std::string& mine);

  // Checks that every process passes the same `label`; otherwise reports the labels on stderr,
  // with `what`, and ends this process (the processes no longer run the same cases).
  void require_in_step(const std::string& label, const std::string& what);

 private:
  Cluster();
  int rank_ = 0;
  int size_ = 1;
  long first_pid_ = 0;
  std::string host_;
  std::uint64_t next_case_ = 0;
  std::shared_ptr<dist::core::Store> store_;
  std::shared_ptr<dist::core::Context> control_;
};

// Ends this process after saying why on stderr (distrun then stops the others).
[[noreturn]] void abandon(const std::string& why);

}  // namespace props::procs
