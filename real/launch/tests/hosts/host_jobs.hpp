// Running a gloo job across test hosts (testing/hosts.hpp): one distrun a host, all started at
// once, a fault injected once every rank is ready, and what each rank printed read back with its
// times (wall-clock ms, as host_job prints them).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "real/launch/tests/command.hpp"
#include "testing/hosts.hpp"

namespace hosts_test {

struct JobSpec {
  int job_hosts = 0;  // the job runs on hosts 0..job_hosts-1 (0: every host)
  int ranks_per_host = 2;
  int calls = 20;
  int interval_ms = 0;
  int timeout_ms = 5000;
  int groups = 0;                               // host_job --groups
  int late_destroy_ms = 0;                      // host_job --late-destroy-ms
  std::chrono::milliseconds limit{60000};       // each distrun is killed after this
  std::vector<std::string> distrun_flags = {};  // e.g. --no-secret
  dist::launch::EnvVars env = {{"DIST_STORE_SECRET", "hosts-test-secret"}};
  // Called once every rank printed "ready", with each rank's pid (world rank order), on a thread
  // of its own (a fault, a stranger).
  std::function<void(const std::vector<long>& pids)> once_ready = {};
};

// What one rank printed, and its times.
struct RankOutcome {
  std::vector<std::string> lines;
  bool ok = false;    // printed "ok: ..."
  std::string error;  // the error's text from "error at <ms>: " on, with the lines after
  std::optional<long long> error_ms, exit_ms;
  std::optional<long long> destroy_ms;  // how long destroy_dist took
};

struct HostOutcome {
  launch_test::CommandResult distrun;
  long long ended_ms = 0;  // when its distrun had exited (wall clock)
};

struct JobOutcome {
  std::vector<HostOutcome> hosts;
  std::vector<RankOutcome> ranks;  // world rank order
  long long fault_ms = 0;          // when once_ready returned (0: it was not called)
  std::string text() const;        // everything printed, for failure messages
};

JobOutcome run_job(const test_support::Hosts& hosts, const JobSpec& spec);

// With DIST_HOSTS_REPORT=<file> set (ci/bench sets it), appends a row a host to that markdown
// table: the scenario, the host, seconds from the fault to its first error and to its distrun's
// exit, and its ranks' longest destroy_dist. Nothing otherwise.
void report(const std::string& scenario, const JobOutcome& job);

long long wall_ms();

}  // namespace hosts_test
