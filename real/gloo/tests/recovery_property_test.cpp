// Going on after real kills, as a property over gloo processes (fork): random worlds of 3 to 5
// processes lose random ranks, each killed with SIGKILL at a step of its own. The survivors catch
// the RankFailure naming the lost rank, shrink their group without it (shrink_group, abort_parent)
// and repeat the step: every sum must be the reference's over the group's members, every survivor
// must end in the same group of every rank not killed, and nothing may hang. Rank 0 hosts the
// store and is never killed. A few cases a run (each connects real worlds): RC_PARAMS=max_success=N
// runs more.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "real/gloo/tests/process_property.hpp"
#include "testing/ports.hpp"
#include "testing/processes.hpp"

namespace recovery_property {

using namespace std::chrono_literals;
using gloo_process_property::rank_list;

constexpr int steps = 8;

struct KillPlan {
  int n = 3;
  std::map<int, int> killed_at;  // rank -> the step it is killed at (each step at most once)
};

rc::Gen<KillPlan> gen_plan() {
  return rc::gen::exec([] {
    KillPlan p;
    p.n = *rc::gen::element(3, 4, 5);
    std::vector<int> free_steps{1, 2, 3, 4, 5, 6};
    for (int r = 1; r < p.n && static_cast<int>(p.killed_at.size()) < p.n - 2; ++r) {
      if (!*rc::gen::arbitrary<bool>()) continue;
      const auto at = *rc::gen::inRange<std::size_t>(0, free_steps.size());
      p.killed_at[r] = free_steps[at];
      free_steps.erase(free_steps.begin() + static_cast<std::ptrdiff_t>(at));
    }
    return p;
  });
}

// One process of the plan: the steps, and the group it ends in.
std::string survive(const KillPlan& p, const std::string& url, int rank) {
  dist::init_process_group(dist::Backend::gloo, url, rank, p.n, 10s);
  dist::Group group;
  std::vector<int> members(static_cast<std::size_t>(p.n));
  for (int r = 0; r < p.n; ++r) members[static_cast<std::size_t>(r)] = r;
  for (int step = 0; step < steps;) {
    if (const auto it = p.killed_at.find(rank); it != p.killed_at.end() && it->second == step)
      ::raise(SIGKILL);
    std::vector<std::int64_t> v{(rank + 1) * (step + 1)};
    try {
      dist::all_reduce(v, dist::ReduceOp::sum, group);
    } catch (const dist::RankFailure& lost) {
      const int who = lost.failed_rank();
      if (!p.killed_at.contains(who))
        throw std::runtime_error("step " + std::to_string(step) + ": a RankFailure named rank " +
                                 std::to_string(who) + ", which was not killed: " + lost.what());
      group = dist::shrink_group(group, {dist::get_group_rank(group, who)}, {.abort_parent = true});
      members = group.ranks();
      continue;  // the step again, among the survivors
    }
    std::int64_t want = 0;
    for (const int r : members) want += (r + 1) * (step + 1);
    if (v[0] != want)
      throw std::runtime_error("step " + std::to_string(step) + ": sum " + std::to_string(v[0]) +
                               " over " + rank_list(members) + ", the reference's is " +
                               std::to_string(want));
    ++step;
  }
  dist::destroy_dist();
  return rank_list(members);
}

TEST(GlooRecoveryProperty, SurvivorsOfRealKillsShrinkAndAgreeWithTheReference) {
  gloo_process_property::check_few([] {
    const KillPlan p = *gen_plan();
    RC_CLASSIFY(p.killed_at.size() > 1, "several killed");
    const std::string url = "tcp://127.0.0.1:" + std::to_string(test_support::free_port());
    const auto results = test_support::run_processes(
        p.n, [&](int rank) { return survive(p, url, rank); }, 60s);
    RC_ASSERT(static_cast<int>(results.size()) == p.n);
    std::vector<int> kept;
    for (int r = 0; r < p.n; ++r)
      if (!p.killed_at.contains(r)) kept.push_back(r);
    for (const auto& r : results) {
      if (r.hung) RC_FAIL("rank " + std::to_string(r.rank) + " hung");
      if (p.killed_at.contains(r.rank)) {
        RC_ASSERT(r.signal == SIGKILL);
      } else if (r.report != "ok: " + rank_list(kept)) {
        RC_FAIL("rank " + std::to_string(r.rank) + ": " + r.report);
      }
    }
  });
}

}  // namespace recovery_property
