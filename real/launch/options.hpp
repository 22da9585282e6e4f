// distrun's command line: the options (-n, --nnodes, --node-rank, --master-addr, --master-port,
// --grace, --stop-delay, --max-restarts, --secret-file, --no-secret) and the program to run, parsed
// with clear usage errors.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dist::launch {

struct Options {
  int nproc = 0;      // processes on this node (-n / --nproc-per-node)
  int nnodes = 1;     // nodes of the job
  int node_rank = 0;  // this node's index in [0, nnodes)
  std::string master_addr = "127.0.0.1";
  std::optional<int> master_port;           // default: a free port (single node only)
  std::chrono::milliseconds grace{5000};    // SIGTERM -> SIGKILL
  std::chrono::milliseconds stop_delay{0};  // a failure -> SIGTERM to the others
  int max_restarts = 0;  // times each rank's process is restarted after a failure
  std::optional<std::string> secret_file;   // the job's store secret, read from a file
  bool no_secret = false;                   // run without one (explicit opt-in)
  bool help = false;
  std::vector<std::string> command;  // the program and its arguments
};

// A command line distrun cannot run; what() says what is wrong.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses argv[1..]; throws UsageError. `-h`/`--help` sets help and skips the other checks.
Options parse_options(const std::vector<std::string>& args);

// The usage text (printed by -h and after a usage error).
std::string usage_text();

}  // namespace dist::launch
