// install_signal_pipe: the handlers write the signal number, nothing else (async-signal-safe).
#include "real/launch/signal_pipe.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace dist::launch {

namespace {

int write_end = -1;
int read_end = -1;

void on_signal(int sig) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] const auto ignored = ::write(write_end, &byte, 1);
  errno = saved;
}

}  // namespace

int install_signal_pipe() {
  if (read_end >= 0) return read_end;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("distrun: pipe failed");
  read_end = fds[0];
  write_end = fds[1];
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return read_end;
}

}  // namespace dist::launch
