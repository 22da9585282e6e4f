// Supervising the started ranks: their output goes through a LinePrefixer each, SIGINT/SIGTERM
// are forwarded, a failed rank is restarted while it has restarts left, and the first failure
// that is not stops the others (SIGTERM after stop_delay, SIGKILL after grace). Every wait is a
// poll with a short timeout, so nothing blocks for long.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "real/launch/process.hpp"

namespace dist::launch {

struct SupervisorConfig {
  std::chrono::milliseconds grace{5000};       // SIGTERM -> SIGKILL
  std::chrono::milliseconds stop_delay{0};     // first failure -> SIGTERM to the others
  std::chrono::milliseconds drain{1000};       // output still read after the last child exited
  int signal_fd = -1;  // readable when a signal arrived: one byte per signal number (or -1)
  std::function<void(std::string_view)> out;   // where prefixed stdout lines go
  std::function<void(std::string_view)> err;   // where prefixed stderr lines and notes go
  // A failed rank's process is started again by restart(index, n) (its n-th restart) up to
  // max_restarts times, while the others run on; a rank that cannot be restarted (its restarts
  // used up, or can_restart(index) false) stops them as before.
  int max_restarts = 0;
  std::function<Child(std::size_t index, int restart)> restart;
  std::function<bool(std::size_t index)> can_restart;
};

struct RankOutcome {
  int rank = 0;
  pid_t pid = -1;
  bool done = false;
  int wait_status = 0;       // as waitpid reports it
  int stop_signal = 0;       // the signal distrun sent it, if any (last one)
  int restarts = 0;          // how many times its process was restarted
};

// The shell's view of a wait status: the exit code, or 128 + the signal that killed it.
int exit_code(int wait_status);
// "exit status 3" / "killed by signal 9 (Killed)".
std::string describe(int wait_status);

class Supervisor {
 public:
  // ranks[i] is the global rank of children[i] (used in prefixes and messages).
  Supervisor(std::vector<Child> children, std::vector<int> ranks, SupervisorConfig config);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Runs until every child has exited and its output is drained. Returns distrun's exit status:
  // the first failing rank's exit_code, else 128 + the signal distrun received, else 0.
  int run();

  const std::vector<RankOutcome>& outcomes() const { return outcomes_; }
  std::optional<int> first_failure() const { return first_failure_; }  // index into outcomes()

 private:
  struct Stream;
  using Clock = std::chrono::steady_clock;

  void poll_once(std::chrono::milliseconds timeout);
  void read_stream(Stream& stream);
  void handle_signals();
  void reap();
  bool restart(std::size_t index, int wait_status);
  void drain(std::size_t index);
  void escalate(Clock::time_point now);
  void send_all(int signal);
  void print_summary() const;
  bool any_alive() const;
  bool any_stream_open() const;

  std::vector<Child> children_;
  std::vector<RankOutcome> outcomes_;
  std::vector<Stream> streams_;
  SupervisorConfig config_;
  std::optional<int> first_failure_;
  int received_signal_ = 0;
  std::optional<Clock::time_point> failed_at_, term_sent_at_;
  bool kill_sent_ = false;
};

}  // namespace dist::launch
