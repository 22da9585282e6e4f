// Starting a child program with extra environment variables, its stdout and stderr on pipes, in
// a process group of its own (so signals reach it, and whatever it starts, only through us).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "real/launch/environment.hpp"

namespace dist::launch {

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // read end of the child's stdout (non-blocking, close-on-exec)
  int err_fd = -1;  // read end of the child's stderr
};

// fork + execvp of command[0] with `env` added to (or replacing in) this process's environment.
// The child gets /dev/null as stdin. A program that cannot be executed makes the child print
// "distrun: cannot execute '<prog>': <reason>" on its stderr and exit with status 127.
// Throws std::runtime_error when the pipes or the fork fail.
Child start_child(const std::vector<std::string>& command, const EnvVars& env);

// Sends `signal` to the child's process group (the child and what it started).
void signal_child(const Child& child, int signal);

// Closes both read ends, if open.
void close_pipes(Child& child);

}  // namespace dist::launch
