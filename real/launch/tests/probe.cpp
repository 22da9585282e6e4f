// The child program of the distrun tests: prints its environment, lines on both streams, fails,
// kills itself, prints its pid, waits for a signal or ignores SIGTERM, as its arguments say (rank
// from RANK).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

volatile sig_atomic_t got_signal = 0;
void on_signal(int sig) { got_signal = sig; }

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "<unset>";
}

void print_env() {
  std::printf("RANK=%s WORLD_SIZE=%s LOCAL_RANK=%s LOCAL_WORLD_SIZE=%s GROUP_RANK=%s "
              "MASTER_ADDR=%s MASTER_PORT=%s\n",
              env("RANK").c_str(), env("WORLD_SIZE").c_str(), env("LOCAL_RANK").c_str(),
              env("LOCAL_WORLD_SIZE").c_str(), env("GROUP_RANK").c_str(),
              env("MASTER_ADDR").c_str(), env("MASTER_PORT").c_str());
}

void print_lines(int count) {
  for (int i = 0; i < count; ++i) {
    std::printf("out %d\n", i);
    std::fflush(stdout);
    std::fprintf(stderr, "err %d\n", i);
  }
  std::printf("tail without newline");
}

int wait_signal(bool ignore_term) {
  signal(SIGTERM, ignore_term ? SIG_IGN : on_signal);
  if (!ignore_term) signal(SIGINT, on_signal);
  std::printf("ready\n");
  std::fflush(stdout);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (got_signal == 0 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (got_signal == 0) return 99;  // nobody stopped us
  std::printf("got signal %d\n", static_cast<int>(got_signal));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int rank = std::atoi(env("RANK") == "<unset>" ? "-1" : env("RANK").c_str());
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const int value = i + 1 < argc ? std::atoi(argv[i + 1]) : 0;
    if (arg == "--print-env") print_env();
    else if (arg == "--print-pid") std::printf("pid %d\n", static_cast<int>(::getpid())), std::fflush(stdout);
    else if (arg == "--lines") print_lines(value), ++i;
    else if (arg == "--wait-signal") return wait_signal(false);
    else if (arg == "--ignore-term") return wait_signal(true);
    else if (arg == "--kill-self-rank") {
      if (rank == value) ::raise(SIGKILL);
      ++i;
    }
    else if (arg == "--fail-rank") {
      // --fail-rank R CODE: rank R exits with CODE after 200 ms; the others sleep 30 s.
      const int code = i + 2 < argc ? std::atoi(argv[i + 2]) : 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(rank == value ? 200 : 30000));
      if (rank == value) std::fprintf(stderr, "failing with %d\n", code);
      return rank == value ? code : 98;
    } else if (arg == "--exit") return value;
  }
  return 0;
}
