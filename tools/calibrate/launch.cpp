// The launcher command of dist_calibrate, run with a deadline.
#include "tools/calibrate/launch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "dist/errors.hpp"

namespace dist::calibrate {

namespace {
std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}
}  // namespace

int wait_for(int pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done < 0) return 127;
    if (std::chrono::steady_clock::now() >= until) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int run_with_deadline(const std::vector<std::string>& argv, double limit_s) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Error(ErrorCode::backend, "dist_calibrate: fork failed for " + joined(argv));
  if (pid == 0) {
    setpgid(0, 0);  // its own group: the deadline stops the launcher and every rank it started
    execvp(args[0], args.data());
    std::perror(args[0]);
    _exit(127);
  }
  setpgid(pid, pid);
  const int status = wait_for(pid, limit_s);
  if (status >= 0) return status;
  kill(-pid, SIGTERM);
  if (wait_for(pid, 5) < 0) {
    kill(-pid, SIGKILL);
    wait_for(pid, 5);
  }
  std::ostringstream what;
  what << "dist_calibrate: " << joined(argv) << " did not finish within " << limit_s
       << " s (stopped; raise --limit-s if the machine is slow)";
  throw TimeoutError(what.str());
}

std::string find_program(const std::string& name, const std::string& given,
                         const std::vector<std::string>& candidates) {
  namespace fs = std::filesystem;
  const auto runnable = [](const fs::path& p) {
    return access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p);
  };
  if (!given.empty()) return runnable(given) ? given : "";
  for (const auto& c : candidates)
    if (!c.empty() && runnable(c)) return c;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && runnable(fs::path(dir) / name)) return (fs::path(dir) / name).string();
  return "";
}

}  // namespace dist::calibrate
