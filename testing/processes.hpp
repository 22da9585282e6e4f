// Ranks as real processes in tests: fork n children, each runs body(rank) and reports a line of
// text through a pipe; the parent waits with a deadline and kills what is left. Also a scoped
// environment variable.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace test_support {

struct ProcessResult {
  int rank = 0;
  bool exited = false;  // false: killed by a signal, or by us at the deadline
  int status = -1;      // the exit status when exited
  int signal = 0;
  bool hung = false;    // still running at the deadline
  std::string report;   // "ok: ..." or "error: <type>: <what>"
};

// Sets (or with nullopt, unsets) an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

inline void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Runs body(rank) in n child processes. A child reports "ok: <body's text>" and exits 0, or
// "error: <what>" and exits 1. Children still running after `limit` are killed (hung = true).
inline std::vector<ProcessResult> run_processes(int n, const std::function<std::string(int)>& body,
                                                std::chrono::milliseconds limit) {
  std::vector<pid_t> pids;
  std::vector<int> pipes;
  for (int rank = 0; rank < n; ++rank) {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      std::string report;
      int code = 0;
      try {
        report = "ok: " + body(rank);
      } catch (const std::exception& e) {
        report = std::string("error: ") + e.what();
        code = 1;
      }
      write_all(fds[1], report);
      ::_exit(code);
    }
    ::close(fds[1]);
    pids.push_back(pid);
    pipes.push_back(fds[0]);
  }
  std::vector<ProcessResult> results(static_cast<std::size_t>(n));
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int left = n;
  while (left > 0 && std::chrono::steady_clock::now() < deadline) {
    for (int r = 0; r < n; ++r) {
      auto& res = results[static_cast<std::size_t>(r)];
      if (pids[static_cast<std::size_t>(r)] == 0) continue;
      int status = 0;
      if (::waitpid(pids[static_cast<std::size_t>(r)], &status, WNOHANG) <= 0) continue;
      res.exited = WIFEXITED(status);
      res.status = res.exited ? WEXITSTATUS(status) : -1;
      res.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      pids[static_cast<std::size_t>(r)] = 0;
      --left;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int r = 0; r < n; ++r) {
    auto& res = results[static_cast<std::size_t>(r)];
    res.rank = r;
    if (pids[static_cast<std::size_t>(r)] != 0) {
      ::kill(pids[static_cast<std::size_t>(r)], SIGKILL);
      ::waitpid(pids[static_cast<std::size_t>(r)], nullptr, 0);
      res.hung = true;
    }
    char buf[4096];
    ssize_t got = 0;
    while ((got = ::read(pipes[static_cast<std::size_t>(r)], buf, sizeof buf)) > 0)
      res.report.append(buf, static_cast<std::size_t>(got));
    ::close(pipes[static_cast<std::size_t>(r)]);
  }
  return results;
}

}  // namespace test_support
