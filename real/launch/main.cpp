// distrun: starts N ranks of a program with the torchrun environment and supervises them
// (see options.cpp's usage text). Exit status: the first failing rank's, 2 on a usage error.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/port_reservation.hpp"
#include "real/launch/environment.hpp"
#include "real/launch/options.hpp"
#include "real/launch/process.hpp"
#include "real/launch/signal_pipe.hpp"
#include "real/launch/supervisor.hpp"

namespace {

using namespace dist::launch;

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n <= 0) return;  // a closed stdout/stderr: drop the output, keep supervising
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

int launch(const Options& options) {
  const int signal_fd = install_signal_pipe();
  // The port stays reserved while the job runs, so no other process takes it before rank 0's
  // store binds it.
  std::optional<dist::core::PortReservation> reserved;
  if (!options.master_port) reserved.emplace(dist::core::PortReservation::on(options.master_addr));
  const int port = reserved ? reserved->port() : *options.master_port;
  const std::string secret = job_secret(options);
  if (secret.empty())
    write_all(STDERR_FILENO,
              "distrun: warning: --no-secret: the ranks' store accepts any client that reaches "
              "port " +
                  std::to_string(port) + " (see docs/security.md)\n");
  // Local process `local` of this node, started for the `restart`-th time (0: the first).
  auto start_rank = [&](int local, int restart) {
    auto environment = rank_environment(options, local, port, restart);
    if (!secret.empty()) environment.emplace_back("DIST_STORE_SECRET", secret);
    return start_child(options.command, std::move(environment));
  };
  std::vector<Child> children;
  std::vector<int> ranks;
  for (int local = 0; local < options.nproc; ++local) {
    try {
      children.push_back(start_rank(local, 0));
    } catch (const std::exception& e) {
      for (auto& c : children) signal_child(c, SIGKILL);
      throw;
    }
    ranks.push_back(options.node_rank * options.nproc + local);
  }
  SupervisorConfig config{
      .grace = options.grace,
      .stop_delay = options.stop_delay,
      .signal_fd = signal_fd,
      .out = [](std::string_view s) { write_all(STDOUT_FILENO, s); },
      .err = [](std::string_view s) { write_all(STDERR_FILENO, s); },
      .max_restarts = options.max_restarts,
      .restart = [&](std::size_t local,
                     int restart) { return start_rank(static_cast<int>(local), restart); },
      // Rank 0 hosts the job's store: the others cannot go on without it.
      .can_restart =
          [&](std::size_t local) {
    return options.node_rank * options.nproc + static_cast<int>(local) != 0;
      }};
  Supervisor supervisor(std::move(children), std::move(ranks), std::move(config));
  return supervisor.run();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Options options;
  try {
    options = parse_options(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "distrun: %s\n%s", e.what(), usage_text().c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  try {
    return launch(options);
  } catch (const UsageError& e) {  // one that needs the environment: a missing secret
    std::fprintf(stderr, "distrun: %s\n%s", e.what(), usage_text().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distrun: %s\n", e.what());
    return 1;
  }
}
