// start_child: the environment block and argv are built before fork, so the child only calls
// async-signal-safe functions (setpgid, dup2, execvpe, write, _exit).
#include "real/launch/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

extern char** environ;

namespace dist::launch {

namespace {

std::vector<std::string> merged_environment(const EnvVars& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [key, value] : env) replaced = replaced || key == name;
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [key, value] : env) out.push_back(key + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void write_text(int fd, const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(fd, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void exec_in_child(int out, int err, char** argv, char** envp, const char* failure) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a rank never outlives distrun
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  ::signal(SIGPIPE, SIG_DFL);
  ::execvpe(argv[0], argv, envp);
  write_text(STDERR_FILENO, failure);
  write_text(STDERR_FILENO, std::strerror(errno));  // not async-signal-safe in theory; glibc's is
  write_text(STDERR_FILENO, "\n");
  ::_exit(127);
}

}  // namespace

Child start_child(const std::vector<std::string>& command, const EnvVars& env) {
  if (command.empty()) throw std::runtime_error("start_child: no program");
  auto env_strings = merged_environment(env);
  auto envp = pointers(env_strings);
  auto argv_strings = command;
  auto argv = pointers(argv_strings);
  const std::string failure = "distrun: cannot execute '" + command[0] + "': ";
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]);
    throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid == 0) exec_in_child(out[1], err[1], argv.data(), envp.data(), failure.c_str());
  ::close(out[1]);
  ::close(err[1]);
  if (pid < 0) {
    ::close(out[0]), ::close(err[0]);
    throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  }
  ::setpgid(pid, pid);  // also here, so a signal sent right after start reaches the group
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  return {pid, out[0], err[0]};
}

void signal_child(const Child& child, int signal) {
  if (child.pid <= 0) return;
  if (::kill(-child.pid, signal) != 0) ::kill(child.pid, signal);
}

void close_pipes(Child& child) {
  if (child.out_fd >= 0) ::close(child.out_fd);
  if (child.err_fd >= 0) ::close(child.err_fd);
  child.out_fd = child.err_fd = -1;
}

}  // namespace dist::launch
