// The torchrun-style environment distrun gives each local process and the job's store secret.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "real/launch/options.hpp"

namespace dist::launch {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT and
// TORCHELASTIC_RESTART_COUNT (`restart`: how many times the rank's process was restarted) for
// local process `local_rank` of this node, with the rendezvous at options.master_addr:`port`.
EnvVars rank_environment(const Options& options, int local_rank, int port, int restart = 0);

// The job's store secret (DIST_STORE_SECRET) for the ranks' environment: --secret-file's first
// line, else DIST_STORE_SECRET, else empty with --no-secret, else (single node) 32 random hex
// digits from /dev/urandom. A multi-node job given none is a UsageError (each node's distrun
// would draw a different one). runtime_error when the file or /dev/urandom cannot be read.
std::string job_secret(const Options& options);

}  // namespace dist::launch
