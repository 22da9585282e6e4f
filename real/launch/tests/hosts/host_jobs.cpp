// run_job: a thread a host running its distrun under run_command, an output hook counting the
// "ready" lines, and the parse of each rank's lines.
#include "real/launch/tests/hosts/host_jobs.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace hosts_test {

long long wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// (rank, pid) of each "[R] ready: ..., pid P" line.
std::vector<std::pair<int, long>> ready_pids(const std::string& out) {
  std::vector<std::pair<int, long>> found;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("] ready: ");
    const auto pid = line.rfind(", pid ");
    if (line.empty() || line[0] != '[' || at == std::string::npos || pid == std::string::npos)
      continue;
    found.emplace_back(std::stoi(line.substr(1, at - 1)), std::stol(line.substr(pid + 6)));
  }
  return found;
}

RankOutcome parse_rank(const std::vector<std::string>& lines) {
  RankOutcome r;
  r.lines = lines;
  bool in_error = false;
  for (const auto& line : lines) {
    if (line.rfind("ok: ", 0) == 0) r.ok = true;
    if (line.rfind("error at ", 0) == 0) {
      r.error_ms = std::stoll(line.substr(9));
      r.error = line.substr(line.find(": ") + 2);
      in_error = true;
      continue;
    }
    if (line.rfind("destroy_dist: ", 0) == 0) {
      r.destroy_ms = std::stoll(line.substr(14));
      in_error = false;
    } else if (line.rfind("exit at ", 0) == 0) {
      r.exit_ms = std::stoll(line.substr(8));
      in_error = false;
    } else if (in_error) {
      r.error += "\n" + line;
    }
  }
  return r;
}

}  // namespace

std::string JobOutcome::text() const {
  std::ostringstream out;
  for (std::size_t h = 0; h < hosts.size(); ++h)
    out << "--- host " << h << " (exit " << hosts[h].distrun.exit_code()
        << (hosts[h].distrun.timed_out ? ", killed at the limit" : "") << ")\n"
        << hosts[h].distrun.out << hosts[h].distrun.err;
  return out.str();
}

JobOutcome run_job(const test_support::Hosts& hosts, const JobSpec& spec) {
  const int n = spec.job_hosts > 0 ? spec.job_hosts : hosts.count();
  JobOutcome outcome;
  outcome.hosts.resize(static_cast<std::size_t>(n));
  std::atomic<int> ready{0};
  std::mutex pids_mutex;
  std::vector<long> pids(static_cast<std::size_t>(n * spec.ranks_per_host), 0);
  const int world = n * spec.ranks_per_host;
  std::vector<std::jthread> threads;
  for (int h = 0; h < n; ++h) {
    std::vector<std::string> command{DISTRUN_PATH,
                                     "-n",
                                     std::to_string(spec.ranks_per_host),
                                     "--nnodes",
                                     std::to_string(n),
                                     "--node-rank",
                                     std::to_string(h),
                                     "--master-addr",
                                     hosts.address(0),
                                     "--master-port",
                                     "29500"};
    command.insert(command.end(), spec.distrun_flags.begin(), spec.distrun_flags.end());
    for (const std::string& part :
         {std::string("--"), std::string(HOST_JOB_PATH), std::string("--calls"),
          std::to_string(spec.calls), std::string("--interval-ms"),
          std::to_string(spec.interval_ms), std::string("--timeout-ms"),
          std::to_string(spec.timeout_ms), std::string("--groups"), std::to_string(spec.groups),
          std::string("--late-destroy-ms"), std::to_string(spec.late_destroy_ms)})
      command.push_back(part);
    threads.emplace_back([&, h, command = hosts.on(h, command)] {
      int seen = 0;
      const auto hook = [&](pid_t, const std::string& out, const std::string&) {
        const int now = count_of(out, "] ready: ");
        if (now <= seen) return;
        {
          std::lock_guard lock(pids_mutex);
          for (const auto& [rank, pid] : ready_pids(out))
            pids[static_cast<std::size_t>(rank)] = pid;
        }
        ready += now - seen;
        seen = now;
      };
      auto& host = outcome.hosts[static_cast<std::size_t>(h)];
      host.distrun = launch_test::run_command(command, spec.limit, spec.env, hook);
      host.ended_ms = wall_ms();
      ready += world;  // a host that ended early releases the fault
    });
  }
  if (spec.once_ready) {
    while (ready.load() < world) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::vector<long> known;
    {
      std::lock_guard lock(pids_mutex);
      known = pids;
    }
    spec.once_ready(known);
    outcome.fault_ms = wall_ms();
  }
  threads.clear();  // joins
  outcome.ranks.resize(static_cast<std::size_t>(world));
  for (int h = 0; h < n; ++h)
    for (int local = 0; local < spec.ranks_per_host; ++local) {
      const int rank = h * spec.ranks_per_host + local;
      outcome.ranks[static_cast<std::size_t>(rank)] = parse_rank(
          launch_test::rank_lines(outcome.hosts[static_cast<std::size_t>(h)].distrun.out, rank));
    }
  return outcome;
}

void report(const std::string& scenario, const JobOutcome& job) {
  const char* path = std::getenv("DIST_HOSTS_REPORT");
  if (!path || !*path) return;
  const bool fresh = !std::ifstream(path).good();
  std::ofstream out(path, std::ios::app);
  if (fresh)
    out << "| scenario | host | first error | all exited | destroy_dist (longest) |\n"
        << "|---|---|---|---|---|\n";
  const auto seconds = [](long long ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%+.2f s", static_cast<double>(ms) / 1000);
    return std::string(text);
  };
  const std::size_t per_host = job.ranks.size() / job.hosts.size();
  for (std::size_t h = 0; h < job.hosts.size(); ++h) {
    std::optional<long long> first, destroy;
    for (std::size_t r = h * per_host; r < (h + 1) * per_host; ++r) {
      const auto& rank = job.ranks[r];
      if (rank.error_ms && (!first || *rank.error_ms < *first)) first = rank.error_ms;
      if (rank.destroy_ms) destroy = std::max(destroy.value_or(0), *rank.destroy_ms);
    }
    out << "| " << scenario << " | " << h << " | "
        << (first ? seconds(*first - job.fault_ms) : std::string("none")) << " | "
        << seconds(job.hosts[h].ended_ms - job.fault_ms) << " | "
        << (destroy ? std::to_string(*destroy) + " ms" : std::string("-")) << " |\n";
  }
}

}  // namespace hosts_test
