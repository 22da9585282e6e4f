// dist::spawn: the parent forks the workers and watches them (waitpid with a poll interval, the
// deadline, stopping the others after a failure); each worker reports "<time> <error>" on a pipe.
#include "dist/real/spawn.hpp"

#include <cxxabi.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>

#include "core/store/port_reservation.hpp"
#include "dist/api.hpp"
#include "dist/real/init.hpp"

namespace dist {

namespace {

using Clock = std::chrono::steady_clock;

std::string type_name(const std::exception& e) {
  if (const auto* d = dynamic_cast<const Error*>(&e)) return std::string(to_string(d->code()));
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? name.get() : typeid(e).name();
}

void write_report(int fd, const std::string& error) {
  const auto now = Clock::now().time_since_epoch().count();
  // Short enough to fit the pipe's buffer: the parent reads it only after the worker exited.
  const std::string text = std::to_string(now) + " " + error.substr(0, 16000);
  [[maybe_unused]] const auto n = ::write(fd, text.data(), text.size());
}

// The worker process: never returns.
[[noreturn]] void run_worker(int rank, int nprocs, int port, int report_fd,
                             const std::function<void()>& fn, const SpawnOptions& options) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the parent
  int code = 0;
  try {
    const std::string r = std::to_string(rank), n = std::to_string(nprocs);
    for (const auto& [name, value] : {std::pair{"RANK", r}, {"LOCAL_RANK", r}, {"WORLD_SIZE", n},
                                      {"LOCAL_WORLD_SIZE", n}, {"MASTER_ADDR", std::string("127.0.0.1")},
                                      {"MASTER_PORT", std::to_string(port)}})
      ::setenv(name, value.c_str(), 1);
    ::unsetenv("GROUP_RANK");
    init_dist("pytorch", options.backend, {.timeout = options.timeout});
    fn();
  } catch (const std::exception& e) {
    write_report(report_fd, type_name(e) + ": " + e.what());
    code = 1;
  } catch (...) {
    write_report(report_fd, "unknown exception");
    code = 1;
  }
  try {
    destroy_dist();
  } catch (...) {
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(code);
}

struct Worker {
  pid_t pid = -1;
  int report_fd = -1;
  WorkerOutcome outcome;
  bool done = false;
  long long failed_at = 0;  // steady-clock ticks the worker reported with its error
};

void read_report(Worker& w) {
  char buffer[8192];
  std::string text;
  ssize_t n = 0;
  while ((n = ::read(w.report_fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  ::close(w.report_fd);
  w.report_fd = -1;
  const auto space = text.find(' ');
  if (space == std::string::npos) return;
  w.failed_at = std::atoll(text.substr(0, space).c_str());
  w.outcome.error = text.substr(space + 1);
}

bool failed(const Worker& w) { return w.done && !(w.outcome.exited && w.outcome.exit_status == 0); }

// Reaps what has exited; returns true when a worker that had not yet been seen failed.
bool reap(std::vector<Worker>& workers) {
  bool new_failure = false;
  for (auto& w : workers) {
    int status = 0;
    if (w.done || ::waitpid(w.pid, &status, WNOHANG) != w.pid) continue;
    w.done = true;
    w.outcome.exited = WIFEXITED(status);
    w.outcome.exit_status = w.outcome.exited ? WEXITSTATUS(status) : -1;
    w.outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    read_report(w);
    if (failed(w)) {
      if (w.failed_at == 0) w.failed_at = Clock::now().time_since_epoch().count();
      new_failure = true;
    }
  }
  return new_failure;
}

std::string describe(const WorkerOutcome& o) {
  std::string text = o.exited ? "exit status " + std::to_string(o.exit_status)
                              : "killed by signal " + std::to_string(o.signal) + " (" +
                                    ::strsignal(o.signal) + ")";
  if (!o.error.empty()) text += ": " + o.error;
  return text;
}

[[noreturn]] void raise_failure(const std::vector<Worker>& workers, int nprocs) {
  const Worker* first = nullptr;
  for (const auto& w : workers)
    if (failed(w) && (!first || w.failed_at < first->failed_at)) first = &w;
  std::string message = "dist::spawn: rank " + std::to_string(first->outcome.rank) + " of " +
                        std::to_string(nprocs) + " failed: " + describe(first->outcome);
  std::vector<WorkerOutcome> outcomes;
  for (const auto& w : workers) {
    outcomes.push_back(w.outcome);
    if (&w != first)
      message += "\n  rank " + std::to_string(w.outcome.rank) + ": " +
                 (w.done ? (failed(w) ? describe(w.outcome) : "ok") : "still running");
  }
  throw SpawnError(message, first->outcome.rank, std::move(outcomes));
}

void signal_running(std::vector<Worker>& workers, int sig) {
  for (auto& w : workers)
    if (!w.done && w.pid > 0) ::kill(w.pid, sig);
}

// The error path of starting: kills and reaps the workers started so far.
void abandon(std::vector<Worker>& workers) {
  for (auto& w : workers) {
    if (w.pid <= 0 || w.done) continue;
    ::kill(w.pid, SIGKILL);
    ::waitpid(w.pid, nullptr, 0);
    w.done = true;
  }
}

}  // namespace

namespace {

// Watches the workers until all have exited; the stop sequence after a failure; the deadline.
void watch(std::vector<Worker>& workers, int nprocs, const SpawnOptions& options) {
  const auto start = Clock::now();
  std::optional<Clock::time_point> failure_at, term_at;
  std::vector<int> overdue;
  while (std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return !w.done; })) {
    const auto now = Clock::now();
    if (reap(workers) && !failure_at) failure_at = now;
    if (failure_at && !term_at && now >= *failure_at + options.grace) {
      signal_running(workers, SIGTERM);
      term_at = now;
    }
    if (term_at && now >= *term_at + std::chrono::seconds(1)) signal_running(workers, SIGKILL);
    if (options.deadline && overdue.empty() && !failure_at && now >= start + *options.deadline) {
      for (const auto& w : workers)
        if (!w.done) overdue.push_back(w.outcome.rank);
      signal_running(workers, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return failed(w); }) &&
      overdue.empty())
    raise_failure(workers, nprocs);
  if (!overdue.empty()) {
    std::string names;
    for (const int r : overdue) names += (names.empty() ? "" : ", ") + std::to_string(r);
    throw TimeoutError("dist::spawn: the deadline of " + std::to_string(options.deadline->count()) +
                           "ms passed with rank(s) " + names + " still running; they were killed",
                       overdue);
  }
}

}  // namespace

void spawn(int nprocs, const std::function<void()>& fn, const SpawnOptions& options) {
  if (nprocs < 1) throw InvalidArgument("dist::spawn: nprocs must be >= 1, got " + std::to_string(nprocs));
  if (is_distributed())
    throw InvalidArgument("dist::spawn: this process is already distributed; call it before "
                          "init_dist / init_process_group (or after destroy_dist)");
  // Held until every worker ended, so no other process takes it before rank 0's store binds it.
  const core::PortReservation reserved = [] {
    try {
      return core::PortReservation::on("127.0.0.1");
    } catch (const std::runtime_error& e) {
      throw BackendError(std::string("dist::spawn: ") + e.what());
    }
  }();
  const int port = reserved.port();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::vector<Worker> workers(static_cast<std::size_t>(nprocs));
  for (int rank = 0; rank < nprocs; ++rank) {
    auto& w = workers[static_cast<std::size_t>(rank)];
    w.outcome.rank = rank;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      abandon(workers);
      throw BackendError("dist::spawn: pipe failed");
    }
    w.pid = ::fork();
    if (w.pid == 0) {
      ::close(fds[0]);
      for (int r = 0; r < rank; ++r) ::close(workers[static_cast<std::size_t>(r)].report_fd);
      run_worker(rank, nprocs, port, fds[1], fn, options);
    }
    ::close(fds[1]);
    w.report_fd = fds[0];
    if (w.pid < 0) {
      abandon(workers);
      throw BackendError("dist::spawn: fork failed for rank " + std::to_string(rank));
    }
    ::fcntl(w.report_fd, F_SETFL, O_NONBLOCK);
  }
  watch(workers, nprocs, options);
}

}  // namespace dist
