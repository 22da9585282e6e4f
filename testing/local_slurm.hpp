// A one-node Slurm cluster on this host for launcher tests: munged, slurmctld and slurmd from
// Debian's slurm-wlm and munge, started with a slurm.conf of this machine's name and CPU count,
// state, sockets and ports of their own in a temporary folder, and stopped (with whatever they
// ran) by the destructor. srun commands run with SLURM_CONF pointing at it.
#pragma once

#include <string>
#include <vector>

namespace test_support {

class LocalSlurm {
 public:
  // Why this machine cannot run one ("" when it can): not root, or a program is missing.
  static std::string unavailable();

  // Starts the daemons and waits (at most 30 s) until the node is idle; runtime_error saying
  // which daemon failed, with the end of its log, otherwise.
  LocalSlurm();
  ~LocalSlurm();
  LocalSlurm(const LocalSlurm&) = delete;
  LocalSlurm& operator=(const LocalSlurm&) = delete;

  // The environment srun needs (SLURM_CONF).
  std::vector<std::pair<std::string, std::string>> env() const;

 private:
  void stop();
  std::string dir_;
};

}  // namespace test_support
