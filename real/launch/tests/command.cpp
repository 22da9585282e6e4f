// run_command over dist::launch's start_child: a poll loop with a deadline.
#include "real/launch/tests/command.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include "real/launch/process.hpp"

namespace launch_test {

int CommandResult::exit_code() const {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

namespace {

bool drain(int& fd, std::string& into) {
  char buffer[65536];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n > 0) {
    into.append(buffer, static_cast<std::size_t>(n));
    return true;
  }
  if (n < 0 && errno == EAGAIN) return false;
  ::close(fd);
  fd = -1;
  return false;
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& command, std::chrono::milliseconds limit,
                          const dist::launch::EnvVars& env, const OutputHook& hook) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto child = dist::launch::start_child(command, env);
  CommandResult result;
  while (child.out_fd >= 0 || child.err_fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(start + limit - Clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      dist::launch::signal_child(child, SIGKILL);
      break;
    }
    pollfd fds[2] = {{child.out_fd, POLLIN, 0}, {child.err_fd, POLLIN, 0}};
    ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 50)));
    bool got = false;
    if (child.out_fd >= 0 && fds[0].revents != 0) got = drain(child.out_fd, result.out) || got;
    if (child.err_fd >= 0 && fds[1].revents != 0) got = drain(child.err_fd, result.err) || got;
    if (got && hook) hook(child.pid, result.out, result.err);
  }
  dist::launch::close_pipes(child);
  int status = 0;
  // The pipes closed: the command exited (or closed them); wait for it, within the deadline.
  while (::waitpid(child.pid, &status, WNOHANG) == 0) {
    if (Clock::now() > start + limit) {
      result.timed_out = true;
      dist::launch::signal_child(child, SIGKILL);
      ::waitpid(child.pid, &status, 0);
      break;
    }
    ::usleep(2000);
  }
  result.wait_status = status;
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return result;
}

std::vector<std::string> rank_lines(const std::string& text, int rank) {
  const std::string prefix = "[" + std::to_string(rank) + "] ";
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(prefix)) lines.push_back(line.substr(prefix.size()));
  return lines;
}

}  // namespace launch_test
