// The elastic lifecycle as a property, on sim's deterministic schedule: random worlds lose random
// ranks at random calls, some for good (Fault::kill), some restarted after a random delay
// (Fault::restart). An elastic job (reconfigure every step, the state broadcast on each change)
// must end with every rank but the killed ones, every sum over exactly the agreed members, every
// RankFailure naming only lost ranks, and nothing hung.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "dist/sim/testing.hpp"

namespace {

using dist::sim::Fault;

constexpr int job_steps = 10;

struct RestartCase {
  dist::sim::Cluster cluster;
  std::set<int> killed;     // lost for good
  std::set<int> restarted;  // lost, then back
  std::vector<int> final_members;
};

rc::Gen<RestartCase> gen_restart_case() {
  return rc::gen::exec([] {
    RestartCase c;
    c.cluster.nodes = 1;
    c.cluster.ranks_per_node = *rc::gen::inRange(3, 7);
    c.cluster.schedule = dist::sim::Schedule::deterministic;
    c.cluster.seed = *rc::gen::arbitrary<std::uint64_t>();
    const int n = c.cluster.world_size();
    // Rank 0 is never lost: it holds the state a changed membership broadcasts.
    for (int r = 1; r < n; ++r) {
      const int fate = *rc::gen::element(0, 1, 2);  // 0: kept, 1: killed, 2: restarted
      const int at_call = *rc::gen::inRange(1, job_steps - 1);
      if (fate == 1) {
        c.cluster.faults.push_back(Fault::kill(r, at_call));
        c.killed.insert(r);
      } else if (fate == 2) {
        const auto delay = std::chrono::milliseconds(*rc::gen::inRange(0, 4));
        c.cluster.faults.push_back(Fault::restart(r, at_call, delay));
        c.restarted.insert(r);
      }
      if (fate != 1) c.final_members.push_back(r);
    }
    c.final_members.insert(c.final_members.begin(), 0);
    return c;
  });
}

struct RankView {
  std::vector<std::string> wrong;        // what went wrong, in words
  std::vector<std::vector<int>> failed;  // each RankFailure's failed_ranks()
  std::vector<int> last;
  long long weight = 0;
};

// Reconfigures every step; a changed membership's rank 0 broadcasts the weight and the step; the
// members all_reduce (rank + 1) * (step + 1), which must equal that sum over the agreed members.
void restart_job(const RestartCase& c, std::mutex& m, std::vector<RankView>& seen) {
  const int rank = dist::get_rank();
  dist::Group group;
  std::vector<long long> state{0, 0};  // the weight, the step
  std::vector<int> last;
  std::vector<std::string> wrong;
  std::vector<std::vector<int>> failed;
  while (state[1] < job_steps || last != c.final_members) {
    try {
      group = dist::reconfigure(group);
      if (group.ranks() != last) {
        dist::broadcast(state, 0, group);
        last = group.ranks();
      }
      std::vector<long long> v{(rank + 1) * (state[1] + 1)};
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      long long want = 0;
      for (const int r : last) want += (r + 1) * (state[1] + 1);
      if (v[0] != want)
        wrong.push_back("step " + std::to_string(state[1]) + ": sum " + std::to_string(v[0]) +
                        ", the members' is " + std::to_string(want));
      state[0] += v[0];
      ++state[1];
    } catch (const dist::RankFailure& e) {
      const auto& lost = e.failed_ranks();
      if (std::find(lost.begin(), lost.end(), rank) != lost.end()) throw;  // its own kill
      failed.push_back(lost);
      last.clear();
    }
  }
  std::lock_guard lock(m);
  auto& mine = seen[static_cast<std::size_t>(rank)];
  mine.wrong = std::move(wrong);
  mine.failed = std::move(failed);
  mine.last = std::move(last);
  mine.weight = state[0];
}

TEST(RestartProperty, SurvivorsAndReplacementsAgreeOnEveryStep) {
  EXPECT_TRUE(rc::check("elastic job under random kills and restarts", [] {
    const RestartCase c = *gen_restart_case();
    RC_CLASSIFY(!c.restarted.empty(), "restarts");
    RC_CLASSIFY(!c.killed.empty(), "kills");
    std::mutex m;
    std::vector<RankView> seen(static_cast<std::size_t>(c.cluster.world_size()));
    try {
      dist::sim::run(c.cluster, [&] { restart_job(c, m, seen); });
      RC_ASSERT(c.killed.empty());
    } catch (const dist::sim::RunError& e) {
      for (int r = 0; r < c.cluster.world_size(); ++r) {
        if (c.killed.contains(r)) {
          RC_ASSERT(e.failed_with<dist::RankFailure>(r));
        } else if (!e.outcomes()[static_cast<std::size_t>(r)].ok()) {
          RC_FAIL("rank " + std::to_string(r) +
                  " failed: " + e.outcomes()[static_cast<std::size_t>(r)].message);
        }
      }
    }
    for (const int r : c.final_members) {
      const RankView& s = seen[static_cast<std::size_t>(r)];
      if (!s.wrong.empty()) RC_FAIL("rank " + std::to_string(r) + ": " + s.wrong.front());
      RC_ASSERT(s.last == c.final_members);
      RC_ASSERT(s.weight == seen[0].weight);
      for (const auto& lost : s.failed) {
        RC_ASSERT(!lost.empty());
        for (const int l : lost) RC_ASSERT(c.killed.contains(l) || c.restarted.contains(l));
      }
    }
  }));
}

}  // namespace
