// SIGINT, SIGTERM and SIGHUP delivered as bytes on a pipe (the self-pipe trick), so the
// supervisor's poll loop sees them; SIGPIPE is ignored (a closed stdout must not kill distrun).
#pragma once

namespace dist::launch {

// Installs the handlers (once per process) and returns the pipe's non-blocking read end.
int install_signal_pipe();

}  // namespace dist::launch
