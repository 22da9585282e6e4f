// gloo jobs across hosts (network namespaces, testing/hosts.hpp), 2 hosts x 2 ranks under one
// distrun a host: correct results whatever /etc/hosts says of the host's own name, a stranger
// kept out of the diagnosis, a lost host and a lost store host named on the other side within
// their bounds, with every process gone soon after. Skips where namespaces cannot be made.
#include <gtest/gtest.h>
#include <signal.h>

#include <functional>
#include <optional>
#include <thread>

#include "real/launch/tests/hosts/host_jobs.hpp"

namespace {

using namespace std::chrono_literals;
using hosts_test::JobOutcome;
using hosts_test::JobSpec;
using hosts_test::run_job;
using test_support::Hosts;
using test_support::HostsFile;

// The bounds the issue sets: an error within the timeout plus the roll-call window (5 s) of the
// fault; destroy_dist within 1 s; each process gone within 2 s of its error.
constexpr long long roll_call_bound_ms = 5000;
constexpr long long destroy_bound_ms = 1000;
constexpr long long exit_bound_ms = 2000;

#define SKIP_WITHOUT_HOSTS()                                      \
  if (const std::string why = Hosts::unavailable(); !why.empty()) \
  GTEST_SKIP() << "no test hosts: " << why

void expect_all_ok(const JobOutcome& job, int calls) {
  for (std::size_t r = 0; r < job.ranks.size(); ++r) {
    EXPECT_TRUE(job.ranks[r].ok) << "rank " << r << " did not finish:\n" << job.text();
    EXPECT_TRUE(job.ranks[r].error.empty()) << "rank " << r << ": " << job.ranks[r].error;
  }
  for (const auto& h : job.hosts) EXPECT_EQ(h.distrun.exit_code(), 0) << job.text();
  const std::string line = "ok: " + std::to_string(calls) + " calls, sum 10";
  EXPECT_NE(job.hosts[0].distrun.out.find(line), std::string::npos) << job.text();
}

// Every rank's destroy_dist took at most destroy_bound_ms.
void expect_quick_destroys(const JobOutcome& job) {
  for (std::size_t r = 0; r < job.ranks.size(); ++r)
    EXPECT_TRUE(job.ranks[r].destroy_ms && *job.ranks[r].destroy_ms <= destroy_bound_ms)
        << "rank " << r << ":\n"
        << job.text();
}

// The ranks of `host` (2 a host) failed in time: the first to raise did so within
// `bound_ms` of the fault; each that raised took at most destroy_bound_ms in destroy_dist and
// exited within exit_bound_ms of its error, unless its distrun stopped it first (a peer's failure
// stops the rest of a host's ranks), as it stopped any that did not raise; the distrun ended within
// exit_bound_ms of the first error. Returns the first error's text.
std::string expect_side_failed_in_time(const JobOutcome& job, int host, long long bound_ms) {
  const auto& distrun = job.hosts[static_cast<std::size_t>(host)];
  std::optional<long long> first;
  std::string text;
  for (const int r : {2 * host, 2 * host + 1}) {
    const auto& rank = job.ranks[static_cast<std::size_t>(r)];
    if (!rank.error_ms) {
      EXPECT_NE(distrun.distrun.err.find("rank " + std::to_string(r) + ": killed by signal"),
                std::string::npos)
          << "rank " << r << " neither raised nor was stopped:\n"
          << job.text();
      continue;
    }
    if (!first || *rank.error_ms < *first) {
      first = rank.error_ms;
      text = rank.error;
    }
    if (!rank.exit_ms) {  // raised, then stopped by its distrun before it was through
      EXPECT_NE(distrun.distrun.err.find("rank " + std::to_string(r) + ": killed by signal"),
                std::string::npos)
          << "rank " << r << " neither exited nor was stopped:\n"
          << job.text();
      continue;
    }
    EXPECT_TRUE(rank.destroy_ms && *rank.destroy_ms <= destroy_bound_ms) << "rank " << r << ":\n"
                                                                         << job.text();
    EXPECT_LE(*rank.exit_ms - *rank.error_ms, exit_bound_ms) << "rank " << r << ":\n" << job.text();
  }
  if (!first) {
    ADD_FAILURE() << "no rank of host " << host << " raised:\n" << job.text();
    return "";
  }
  EXPECT_LE(*first - job.fault_ms, bound_ms) << "host " << host << ":\n" << job.text();
  EXPECT_LE(distrun.ended_ms - *first, exit_bound_ms) << "host " << host << ":\n" << job.text();
  return text;
}

// A job of calls 20 ms apart until its fault, which strikes 300 ms after every rank is ready
// (`spec` gives the rest: a 5 s timeout by default); its times go to the report as `scenario`.
JobOutcome with_fault(const Hosts& hosts, const std::string& scenario,
                      const std::function<void(const std::vector<long>& pids)>& fault,
                      JobSpec spec = {}) {
  spec.calls = 100000;
  spec.interval_ms = 20;
  spec.once_ready = [&](const std::vector<long>& pids) {
    std::this_thread::sleep_for(300ms);
    fault(pids);
  };
  auto job = run_job(hosts, spec);
  hosts_test::report(scenario, job);
  return job;
}

TEST(Hosts, TwoHostsTwoRanksEachGetTheWorldsSums) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(2);
  const auto job = run_job(hosts, {.calls = 20});
  expect_all_ok(job, 20);
  EXPECT_NE(job.hosts[1].distrun.out.find("[3] ready: rank 3 of 4, local 1 of 2"),
            std::string::npos)
      << job.text();
}

// Debian maps a host's own name to 127.0.1.1: gloo listened there and every rank failed
// ("connect [127.0.1.1]: Connection refused"). A rank now listens where it reaches MASTER_ADDR
// from.
TEST(Hosts, DebiansDefaultHostsFileDoesNotBindLoopback) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(2, HostsFile::debian_default);
  expect_all_ok(run_job(hosts, {.calls = 5}), 5);
}

// A host whose own name does not resolve: gloo never sees the name (it crashed on it 5 times in
// 21).
TEST(Hosts, AnUnresolvableHostNameIsNoProblem) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(2, HostsFile::unresolvable);
  expect_all_ok(run_job(hosts, {.calls = 5}), 5);
}

// A job run with --no-secret: a stranger reaches the store, may write its own keys, but not the
// call layer's, so no rank raises its words (every rank raised them as a DesyncError before).
TEST(Hosts, AStrangersWordsNeverBecomeARanksError) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(3);
  launch_test::CommandResult stranger;
  JobSpec spec{
      .job_hosts = 2, .calls = 30, .interval_ms = 50, .distrun_flags = {"--no-secret"}, .env = {}};
  spec.once_ready = [&](const std::vector<long>&) {
    stranger = launch_test::run_command(
        hosts.on(2, {HOST_JOB_PATH, "--stranger", hosts.address(0) + ":29500"}), 20s);
  };
  const auto job = run_job(hosts, spec);
  expect_all_ok(job, 30);
  EXPECT_EQ(stranger.exit_code(), 0) << stranger.out << stranger.err;
  for (const char* key : {"calls/desync", "calls/status/0"})
    EXPECT_NE(stranger.out.find(std::string("stranger: refused ") + key + ": " +
                                "TcpStore: only the job's ranks may write 'calls/' keys"),
              std::string::npos)
        << stranger.out << stranger.err;
}

// Host 1 dies (every process SIGKILLed): host 0's ranks name ranks 2 and 3 within the bound.
TEST(Hosts, ALostHostIsNamedOnTheOtherSide) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(2);
  const auto job = with_fault(hosts, "a lost host (kill -9)", [&](auto&) { hosts.kill_all(1); });
  const std::string e = expect_side_failed_in_time(job, 0, 5000 + roll_call_bound_ms);
  EXPECT_NE(e.find("lost rank 2"), std::string::npos) << e;
}

// Host 0, which hosts the store, dies: host 1's ranks raise, destroy_dist is quick without the
// store (four groups of their own: each spent the 2 s reconnect budget, 17.9 s in all), and they
// exit at once.
TEST(Hosts, TheStoreHostsLossIsNamedAndTheRestExitQuickly) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(2);
  const auto job =
      with_fault(hosts, "the store host lost", [&](auto&) { hosts.kill_all(0); }, {.groups = 4});
  const std::string e = expect_side_failed_in_time(job, 1, 5000 + roll_call_bound_ms);
  EXPECT_NE(e.find("lost rank 0"), std::string::npos) << e;
}

// A job that ends well, but host 1's ranks destroy their groups after host 0's have exited and
// taken the store with them: destroy_dist still returns within the bound.
TEST(Hosts, DestroyIsQuickOnceTheStoreHostExited) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(2);
  JobSpec spec{.calls = 10, .timeout_ms = 5000, .groups = 4, .late_destroy_ms = 1000};
  spec.once_ready = [](const std::vector<long>&) {
  };  // the report's times count from when every rank is ready
  const auto job = run_job(hosts, spec);
  hosts_test::report("destroy after the store host exited", job);
  expect_all_ok(job, 10);
  expect_quick_destroys(job);
}

// Host 1's link goes down for good: both sides raise within the bound, each naming the other
// side's ranks as unreachable (alive, cut off), and every process exits.
TEST(Hosts, APermanentPartitionIsNamedOnBothSides) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(2);
  const auto job = with_fault(hosts, "a permanent partition", [&](auto&) { hosts.cut_off(1); });
  const long long bound = 5000 + roll_call_bound_ms;
  const std::string store_side = expect_side_failed_in_time(job, 0, bound);
  EXPECT_NE(store_side.find("ranks 2, 3 on host1 were last heard of in call #"), std::string::npos)
      << store_side;
  EXPECT_NE(store_side.find("unreachable: their connections to the store are open but silent"),
            std::string::npos)
      << store_side;
  const std::string cut_off = expect_side_failed_in_time(job, 1, bound);
  EXPECT_NE(cut_off.find("the store's host, rank 0 on host0, is unreachable"), std::string::npos)
      << cut_off;
}

// Three hosts, and the store's host (host 0) cut off: hosts 1 and 2 still reach each other but
// not the store; every side names the unreachable ranks and their host within the bound.
TEST(Hosts, AnIsolatedStoreHostIsNamedOnEverySide) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(3);
  const auto job =
      with_fault(hosts, "the store host cut off (3 hosts)", [&](auto&) { hosts.cut_off(0); });
  const long long bound = 5000 + roll_call_bound_ms;
  const std::string store_side = expect_side_failed_in_time(job, 0, bound);
  for (const char* host : {"on host1", "on host2"})  // ranks whose last calls differ read apart
    EXPECT_NE(store_side.find(host), std::string::npos) << store_side;
  EXPECT_NE(store_side.find("unreachable"), std::string::npos) << store_side;
  for (const int side : {1, 2}) {
    const std::string e = expect_side_failed_in_time(job, side, bound);
    EXPECT_NE(e.find("the store's host, rank 0 on host0, is unreachable"), std::string::npos) << e;
  }
}

// A 3 s partition inside a 20 s timeout: every call completes once the link is back.
TEST(Hosts, AShortPartitionIsSurvived) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(2);
  JobSpec spec{.calls = 60, .interval_ms = 50, .timeout_ms = 20000};
  spec.once_ready = [&](const std::vector<long>&) {
    std::this_thread::sleep_for(300ms);
    hosts.cut_off(1);
    std::this_thread::sleep_for(3s);
    hosts.reconnect(1);
  };
  expect_all_ok(run_job(hosts, spec), 60);
}

// 50 ms each way between the hosts and 2% of host 1's packets lost: slower, never wrong, no
// spurious error, and destroy_dist within its bound (it took 6-8 s under such delay).
TEST(Hosts, DelayAndLossSlowTheJobButNeverBreakIt) {
  SKIP_WITHOUT_HOSTS();
#ifndef HOSTS_DELAY_PATH
  GTEST_SKIP() << "hosts_delay was not built (libnetfilter-queue-dev is missing)";
#else
  Hosts hosts(2);
  hosts.delay(0, 50ms, HOSTS_DELAY_PATH);
  hosts.delay(1, 50ms, HOSTS_DELAY_PATH);
  hosts.lose(1, 0.02);
  const auto started = hosts_test::wall_ms();
  JobSpec spec{.calls = 10, .timeout_ms = 20000, .groups = 2};
  spec.once_ready = [](const std::vector<long>&) {};
  const auto job = run_job(hosts, spec);
  hosts_test::report("50 ms delay, 2% loss", job);
  expect_all_ok(job, 10);
  expect_quick_destroys(job);
  // Each all_reduce crosses the link at least once each way: 10 of them cannot take under 1 s.
  EXPECT_GE(job.hosts[0].ended_ms - started, 1000) << "was the delay applied?\n" << job.text();
#endif
}

// The same job on the mpi backend: mpirun on host 0 starts host 1's ranks through an rsh agent
// that enters host 1's namespace, as ssh would enter another machine.
TEST(Hosts, MpiRunsAcrossHostsThroughMpirunsRshAgent) {
  SKIP_WITHOUT_HOSTS();
#ifndef HOSTS_MPIRUN_PATH
  GTEST_SKIP() << "dist was built without mpi, or mpirun is missing";
#else
  Hosts hosts(2);
  const auto r = launch_test::run_command(hosts.on(0, {HOSTS_MPIRUN_PATH,
                                                       "--allow-run-as-root",
                                                       "--oversubscribe",
                                                       "-n",
                                                       "4",
                                                       "--host",
                                                       "host0:2,host1:2",
                                                       "--mca",
                                                       "plm_rsh_agent",
                                                       hosts.rsh_agent(),
                                                       "-x",
                                                       "MASTER_ADDR=" + hosts.address(0),
                                                       "-x",
                                                       "MASTER_PORT=29500",
                                                       HOST_JOB_PATH,
                                                       "--launcher",
                                                       "mpi",
                                                       "--calls",
                                                       "20",
                                                       "--timeout-ms",
                                                       "20000"}),
                                          90s);
  ASSERT_FALSE(r.timed_out) << r.out << r.err;
  EXPECT_EQ(r.exit_code(), 0) << r.out << r.err;
  int ok = 0;
  for (auto at = r.out.find("ok: 20 calls, sum 10"); at != std::string::npos;
       at = r.out.find("ok: 20 calls, sum 10", at + 1))
    ++ok;
  EXPECT_EQ(ok, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("ready: rank 3 of 4, local 1 of 2"), std::string::npos) << r.out;
#endif
}

// The store's host freezes (SIGSTOP of rank 0: alive, silent): every other rank names it as
// stopped or hung within the bound, and all exit at once (they took 12-15 s, then 8 s to exit).
TEST(Hosts, AFrozenStoreHostIsNamedAndTheOthersExit) {
  SKIP_WITHOUT_HOSTS();
  Hosts hosts(2);
  const auto job = with_fault(
      hosts, "the store host frozen (SIGSTOP)",
      [](const std::vector<long>& pids) { ::kill(static_cast<pid_t>(pids[0]), SIGSTOP); },
      {.timeout_ms = 3000, .distrun_flags = {"--grace", "1"}});  // SIGKILL 1 s after SIGTERM
  const long long bound = 3000 + roll_call_bound_ms;
  const std::string frozen =
      "the store's host, rank 0 on host0, is unresponsive (is that process "
      "stopped or hung?)";
  const std::string same_host = expect_side_failed_in_time(job, 0, bound + 1000);  // + the grace
  EXPECT_NE(same_host.find(frozen), std::string::npos) << same_host;
  const std::string other_host = expect_side_failed_in_time(job, 1, bound);
  EXPECT_NE(other_host.find(frozen), std::string::npos) << other_host;
}

}  // namespace
