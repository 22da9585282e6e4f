// Restarts after real kills, as a property over gloo processes (fork): random worlds of 3 to 5
// processes lose random ranks, each killed with SIGKILL at a step of its own and started again
// (TORCHELASTIC_RESTART_COUNT=1, as distrun's --max-restarts does), right away or after a pause.
// Every step each member reconfigures, rank 0 of a changed membership broadcasts the step, and the
// members all_reduce: every sum must be the reference's over the members of that step, every
// RankFailure must name killed ranks only, and every process (the replacements too) must end in
// the whole world again, with nothing hanging. Rank 0 hosts the store and is never killed. A few
// cases a run (each connects real worlds): RC_PARAMS=max_success=N runs more.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/fault_tolerance.hpp"
#include "dist/real/init.hpp"
#include "real/gloo/tests/process_property.hpp"
#include "testing/ports.hpp"
#include "testing/processes.hpp"

namespace restart_property {

using namespace std::chrono_literals;
using gloo_process_property::rank_list;

constexpr int steps = 8;

struct RestartPlan {
  int n = 3;
  std::map<int, int> killed_at;        // rank -> the step its first process is killed at
  std::chrono::milliseconds pause{0};  // before a replacement joins
};

rc::Gen<RestartPlan> gen_plan() {
  return rc::gen::exec([] {
    RestartPlan p;
    p.n = *rc::gen::element(3, 4, 5);
    for (int r = 1; r < p.n; ++r)
      if (*rc::gen::arbitrary<bool>()) p.killed_at[r] = *rc::gen::inRange(1, steps - 1);
    if (p.killed_at.empty()) p.killed_at[p.n - 1] = *rc::gen::inRange(1, steps - 1);
    p.pause = std::chrono::milliseconds(*rc::gen::element(0, 300));
    return p;
  });
}

// One process of the plan (a replacement when restart_count() > 0): the elastic loop until the
// steps are done and the world is whole again; returns the membership it ends in.
std::string elastic_rank(const RestartPlan& p, const std::string& url, int rank) {
  dist::init_process_group(dist::Backend::gloo, url, rank, p.n, 10s);
  const bool replacement = dist::restart_count() > 0;
  if (replacement) std::this_thread::sleep_for(p.pause);
  dist::Group group;
  std::vector<std::int64_t> state{0};  // the step, shared at each change of membership
  std::vector<int> last;
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (state[0] < steps || static_cast<int>(last.size()) < p.n) {
    if (std::chrono::steady_clock::now() > until)
      throw std::runtime_error("the world was not whole again within 30 s");
    try {
      group = dist::reconfigure(group, {.timeout = 10s});
      if (group.ranks() != last) {
        dist::broadcast(state, 0, group);
        last = group.ranks();
      }
      const std::int64_t step = state[0];
      if (const auto it = p.killed_at.find(rank);
          !replacement && it != p.killed_at.end() && it->second == step)
        ::raise(SIGKILL);
      std::vector<std::int64_t> v{(rank + 1) * (step + 1)};
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      std::int64_t want = 0;
      for (const int r : last) want += (r + 1) * (step + 1);
      if (v[0] != want)
        throw std::runtime_error("step " + std::to_string(step) + ": sum " + std::to_string(v[0]) +
                                 " over " + rank_list(last) + ", the reference's is " +
                                 std::to_string(want));
      ++state[0];
    } catch (const dist::RankFailure& lost) {
      for (const int r : lost.failed_ranks())
        if (!p.killed_at.contains(r))
          throw std::runtime_error("a RankFailure named rank " + std::to_string(r) +
                                   ", which was not killed: " + lost.what());
      last.clear();  // the next reconfigure leaves it out
    }
  }
  dist::destroy_dist();
  return rank_list(last);
}

// Runs `body` in a child process and, when a SIGKILL ends it, once more as the rank's replacement
// (TORCHELASTIC_RESTART_COUNT=1); returns the last one's text, or throws its error.
std::string restarted(const std::function<std::string()>& body) {
  for (int restart = 0;; ++restart) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // gone with its supervisor, hung or not
      ::close(fds[0]);
      ::setenv("TORCHELASTIC_RESTART_COUNT", std::to_string(restart).c_str(), 1);
      std::string report;
      try {
        report = "ok: " + body();
      } catch (const std::exception& e) {
        report = std::string("error: ") + e.what();
      }
      test_support::write_all(fds[1], report);
      ::_exit(0);
    }
    ::close(fds[1]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::string report;
    char buf[4096];
    for (ssize_t got = 0; (got = ::read(fds[0], buf, sizeof buf)) > 0;)
      report.append(buf, static_cast<std::size_t>(got));
    ::close(fds[0]);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && restart == 0) continue;
    if (report.rfind("ok: ", 0) == 0) return report.substr(4);
    throw std::runtime_error("restart " + std::to_string(restart) + ": " +
                             (report.empty() ? "no report" : report));
  }
}

TEST(GlooRestartProperty, KilledRanksRestartAndRejoinAndEverySumIsTheReferences) {
  gloo_process_property::check_few([] {
    const RestartPlan p = *gen_plan();
    RC_CLASSIFY(p.killed_at.size() > 1, "several killed");
    RC_CLASSIFY(p.pause.count() > 0, "replacements pause");
    const std::string url = "tcp://127.0.0.1:" + std::to_string(test_support::free_port());
    const auto results = test_support::run_processes(
        p.n, [&](int rank) { return restarted([&] { return elastic_rank(p, url, rank); }); }, 60s);
    RC_ASSERT(static_cast<int>(results.size()) == p.n);
    std::vector<int> everyone;
    for (int r = 0; r < p.n; ++r) everyone.push_back(r);
    for (const auto& r : results) {
      if (r.hung) RC_FAIL("rank " + std::to_string(r.rank) + " hung");
      if (r.report != "ok: " + rank_list(everyone))
        RC_FAIL("rank " + std::to_string(r.rank) + ": " + r.report);
    }
  });
}

}  // namespace restart_property
