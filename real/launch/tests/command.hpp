// Running a command from a test: its stdout and stderr captured, a deadline after which it is
// killed, and an optional hook called on each output chunk (to send a signal at the right time).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "real/launch/environment.hpp"

namespace launch_test {

struct CommandResult {
  int wait_status = 0;
  bool timed_out = false;  // killed at the deadline
  std::string out, err;
  std::chrono::milliseconds elapsed{0};
  int exit_code() const;  // exit status, or 128 + signal
};

// Called after each chunk of output with the pid and everything read so far.
using OutputHook = std::function<void(pid_t pid, const std::string& out, const std::string& err)>;

CommandResult run_command(const std::vector<std::string>& command, std::chrono::milliseconds limit,
                          const dist::launch::EnvVars& env = {}, const OutputHook& hook = {});

// The lines of `text` that start with "[rank] ", prefix removed, in order.
std::vector<std::string> rank_lines(const std::string& text, int rank);

}  // namespace launch_test
