// dist::spawn: torch.multiprocessing.spawn / detectron2's launch for C++: runs a function in
// nprocs forked worker processes of this machine, each one rank of a fresh world. Link dist::real.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dist/errors.hpp"
#include "dist/export.hpp"
#include "dist/real/init.hpp"
#include "dist/types.hpp"

namespace dist {

struct SpawnOptions {
  Backend backend = Backend::gloo;
  // The rendezvous and every collective of the workers (as init_process_group's timeout).
  std::chrono::milliseconds timeout = default_pg_timeout;
  // The whole run: workers still running past it are killed and spawn raises TimeoutError.
  std::optional<std::chrono::milliseconds> deadline{};
  // After the first worker fails, how long the others get to finish (they usually fail at once
  // with RankFailure) before they are sent SIGTERM, and SIGKILL one second later.
  std::chrono::milliseconds grace{std::chrono::seconds(5)};
};

// How one worker ended.
struct WorkerOutcome {
  int rank = 0;
  bool exited = false;  // exited normally (else killed by `signal`)
  int exit_status = 0;  // when exited: 0 = fn returned
  int signal = 0;       // when killed
  std::string error;    // "<type>: <what>" of what fn threw, empty if nothing
};

// Raised by spawn when a worker fails: failed_rank() is the first rank that failed (by when it
// failed: the others usually fail because of it), what() names it, its exit status or signal,
// and what it threw, then every other rank's outcome.
class DIST_API SpawnError : public RankFailure {
 public:
  SpawnError(const std::string& message, int failed_rank, std::vector<WorkerOutcome> outcomes)
      : RankFailure(message, failed_rank), outcomes_(std::move(outcomes)) {}
  const std::vector<WorkerOutcome>& outcomes() const noexcept { return outcomes_; }

 private:
  std::vector<WorkerOutcome> outcomes_;
};

// Forks nprocs workers. Worker r sets the torchrun variables (RANK=r, WORLD_SIZE=nprocs,
// LOCAL_RANK=r, LOCAL_WORLD_SIZE=nprocs, MASTER_ADDR=127.0.0.1, MASTER_PORT=a free port), calls
// init_dist("pytorch", options.backend), runs fn() (dist::get_rank() etc. answer for it), then
// destroy_dist() and exits. Returns when every worker has exited with status 0.
// Errors: InvalidArgument (nprocs < 1, or this process is already distributed), SpawnError (a
// worker failed), TimeoutError (options.deadline passed; names the ranks still running).
// Call it from a single-threaded point of the program (it forks); stdio is flushed first.
DIST_API void spawn(int nprocs, const std::function<void()>& fn, const SpawnOptions& options = {});

}  // namespace dist
