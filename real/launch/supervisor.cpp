// Supervisor::run: a poll loop over the children's pipes and the signal pipe; reaping with
// WNOHANG each round; a failed rank restarted while it may be; the stop sequence (SIGTERM, then
// SIGKILL) after the first failure or a forwarded signal; a per-rank summary on stderr when
// something failed or was restarted.
#include "real/launch/supervisor.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "real/launch/line_prefixer.hpp"

namespace dist::launch {

struct Supervisor::Stream {
  int* fd;  // points into the child's out_fd / err_fd, -1 once closed
  LinePrefixer prefixer;
};

int exit_code(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::string describe(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status))
    return "killed by signal " + std::to_string(WTERMSIG(wait_status)) + " (" +
           ::strsignal(WTERMSIG(wait_status)) + ")";
  return "unknown wait status " + std::to_string(wait_status);
}

Supervisor::Supervisor(std::vector<Child> children, std::vector<int> ranks, SupervisorConfig config)
    : children_(std::move(children)), config_(std::move(config)) {
  for (std::size_t i = 0; i < children_.size(); ++i) {
    outcomes_.push_back({.rank = ranks[i], .pid = children_[i].pid});
    const std::string prefix = rank_prefix(ranks[i]);
    streams_.push_back({&children_[i].out_fd, LinePrefixer(prefix, config_.out)});
    streams_.push_back({&children_[i].err_fd, LinePrefixer(prefix, config_.err)});
  }
}

Supervisor::~Supervisor() {
  for (auto& child : children_) close_pipes(child);
}

bool Supervisor::any_alive() const {
  return std::any_of(outcomes_.begin(), outcomes_.end(), [](const auto& o) { return !o.done; });
}

bool Supervisor::any_stream_open() const {
  return std::any_of(streams_.begin(), streams_.end(), [](const auto& s) { return *s.fd >= 0; });
}

void Supervisor::read_stream(Stream& stream) {
  char buffer[65536];
  for (int round = 0; round < 16; ++round) {  // bounded, so one chatty rank cannot starve the loop
    const ssize_t n = ::read(*stream.fd, buffer, sizeof buffer);
    if (n > 0) {
      stream.prefixer.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    stream.prefixer.finish();  // EOF or a read error
    ::close(*stream.fd);
    *stream.fd = -1;
    return;
  }
}

void Supervisor::poll_once(std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  std::vector<Stream*> owners;
  if (config_.signal_fd >= 0) fds.push_back({config_.signal_fd, POLLIN, 0}), owners.push_back(nullptr);
  for (auto& s : streams_)
    if (*s.fd >= 0) fds.push_back({*s.fd, POLLIN, 0}), owners.push_back(&s);
  if (::poll(fds.data(), fds.size(), static_cast<int>(timeout.count())) <= 0) return;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    if (owners[i] == nullptr) handle_signals();
    else read_stream(*owners[i]);
  }
}

void Supervisor::handle_signals() {
  unsigned char signals[64];
  const ssize_t n = ::read(config_.signal_fd, signals, sizeof signals);
  for (ssize_t i = 0; i < n; ++i) {
    const int sig = signals[i];
    if (received_signal_ != 0 && sig == received_signal_ && !kill_sent_) {
      send_all(SIGKILL);  // asked twice: stop now
      kill_sent_ = true;
      continue;
    }
    received_signal_ = sig;
    send_all(sig);
    if (!term_sent_at_) term_sent_at_ = Clock::now();
  }
}

void Supervisor::send_all(int signal) {
  for (std::size_t i = 0; i < children_.size(); ++i) {
    if (outcomes_[i].done) continue;
    outcomes_[i].stop_signal = signal;
    signal_child(children_[i], signal);
  }
}

void Supervisor::reap() {
  for (std::size_t i = 0; i < outcomes_.size(); ++i) {
    auto& o = outcomes_[i];
    if (o.done) continue;
    int status = 0;
    if (::waitpid(o.pid, &status, WNOHANG) != o.pid) continue;
    o.done = true;
    o.wait_status = status;
    if (exit_code(status) == 0 || first_failure_) continue;
    if (restart(i, status)) continue;
    first_failure_ = static_cast<int>(i);
    failed_at_ = Clock::now();
    if (!any_alive() || o.stop_signal != 0) continue;
    const auto delay = std::chrono::duration<double>(config_.stop_delay).count();
    char note[96];
    std::snprintf(note, sizeof note, "the other ranks get %g s to exit, then SIGTERM", delay);
    config_.err("distrun: rank " + std::to_string(o.rank) + " (pid " + std::to_string(o.pid) +
                ") failed (" + describe(status) + "); " +
                (delay > 0 ? std::string(note) : "stopping the other ranks") + "\n");
  }
}

// Starts failed rank `index` again when it may be; whether it did.
bool Supervisor::restart(std::size_t index, int wait_status) {
  auto& o = outcomes_[index];
  if (!config_.restart || o.restarts >= config_.max_restarts || o.stop_signal != 0 ||
      received_signal_ != 0 || (config_.can_restart && !config_.can_restart(index)))
    return false;
  drain(index);
  config_.err("distrun: rank " + std::to_string(o.rank) + " (pid " + std::to_string(o.pid) +
              ") failed (" + describe(wait_status) + "); restarting it (restart " +
              std::to_string(o.restarts + 1) + " of " + std::to_string(config_.max_restarts) +
              ")\n");
  try {
    children_[index] = config_.restart(index, o.restarts + 1);
  } catch (const std::exception& e) {
    config_.err("distrun: rank " + std::to_string(o.rank) + " could not be restarted: " + e.what() +
                "\n");
    return false;
  }
  ++o.restarts;
  o.pid = children_[index].pid;
  o.done = false;
  o.wait_status = 0;
  return true;
}

// The dead process's last output, before its slot takes the new one's pipes: read until both
// streams end (what it started is killed first, so none keeps them open), at most 200 ms.
void Supervisor::drain(std::size_t index) {
  signal_child(children_[index], SIGKILL);
  const auto until = Clock::now() + std::chrono::milliseconds(200);
  auto& out = streams_[2 * index];
  auto& err = streams_[2 * index + 1];
  while ((*out.fd >= 0 || *err.fd >= 0) && Clock::now() < until) {
    pollfd fds[2] = {{*out.fd, POLLIN, 0}, {*err.fd, POLLIN, 0}};
    if (::poll(fds, 2, 20) <= 0) continue;
    if (*out.fd >= 0 && fds[0].revents) read_stream(out);
    if (*err.fd >= 0 && fds[1].revents) read_stream(err);
  }
  out.prefixer.finish();
  err.prefixer.finish();
  close_pipes(children_[index]);
}

void Supervisor::escalate(Clock::time_point now) {
  if (failed_at_ && !term_sent_at_ && now >= *failed_at_ + config_.stop_delay && any_alive()) {
    send_all(SIGTERM);
    term_sent_at_ = now;
  }
  if (term_sent_at_ && !kill_sent_ && now >= *term_sent_at_ + config_.grace && any_alive()) {
    send_all(SIGKILL);
    kill_sent_ = true;
  }
}

void Supervisor::print_summary() const {
  for (std::size_t i = 0; i < outcomes_.size(); ++i) {
    const auto& o = outcomes_[i];
    std::string line = "distrun: rank " + std::to_string(o.rank) + ": " + describe(o.wait_status);
    if (o.restarts > 0)
      line +=
          " (restarted " + std::to_string(o.restarts) + (o.restarts == 1 ? " time)" : " times)");
    if (first_failure_ && *first_failure_ == static_cast<int>(i)) line += " (first failure)";
    else if (o.stop_signal != 0 && exit_code(o.wait_status) != 0)
      line += std::string(" (after distrun sent it ") + ::sigabbrev_np(o.stop_signal) + ")";
    config_.err(line + "\n");
  }
}

int Supervisor::run() {
  std::optional<Clock::time_point> drain_until;
  while (true) {
    const auto now = Clock::now();
    reap();
    escalate(now);
    if (!any_alive() && !drain_until) drain_until = now + config_.drain;
    if (drain_until && (!any_stream_open() || now >= *drain_until)) break;
    poll_once(std::chrono::milliseconds(20));
  }
  for (auto& s : streams_) s.prefixer.finish();
  const bool restarted =
      std::any_of(outcomes_.begin(), outcomes_.end(), [](const auto& o) { return o.restarts > 0; });
  if (first_failure_ || received_signal_ != 0 || restarted) print_summary();
  if (first_failure_) return exit_code(outcomes_[static_cast<std::size_t>(*first_failure_)].wait_status);
  return received_signal_ != 0 ? 128 + received_signal_ : 0;
}

}  // namespace dist::launch
