// Starting the measuring world: a launcher command (distrun or mpirun) in its own process group,
// stopped when it outlives its deadline.
#pragma once

#include <string>
#include <vector>

namespace dist::calibrate {

// Waits up to `seconds` for child `pid`; its exit status (128 + signal when a signal ended it),
// or -1 when it is still running.
int wait_for(int pid, double seconds);

// Runs `argv` and returns its exit status (128 + signal when a signal ended it); past `limit_s`
// seconds its whole process group gets SIGTERM, then SIGKILL 5 s later, and dist::TimeoutError
// names the command. dist::Error when it cannot be started.
int run_with_deadline(const std::vector<std::string>& argv, double limit_s);

// An executable named `name`: `given` when set, else the first of `candidates` that exists and is
// executable, else `name` found on $PATH; "" when none is.
std::string find_program(const std::string& name, const std::string& given,
                         const std::vector<std::string>& candidates);

}  // namespace dist::calibrate
