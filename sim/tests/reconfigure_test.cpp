// The elastic lifecycle on sim: a Fault::restart kills a rank's process and starts its function
// again as a replacement; dist::reconfigure lets the survivors agree on a membership without it and
// then with it; each violation of the lifecycle's contract is named (a call on a replaced group, a
// replacement that never joins, survivors whose shrink lists differ).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using dist::sim::Fault;
using dist::sim::RunError;
using dist::sim::Schedule;
using sim_test::failure_of;
using sim_test::world;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(Reconfigure, EveryMemberAndNoNewcomerKeepsTheGroup) {
  dist::sim::run(world(3), [] {
    EXPECT_EQ(dist::restart_count(), 0);
    const dist::Group g = dist::reconfigure();
    EXPECT_EQ(g.ranks(), (std::vector<int>{0, 1, 2}));
    std::vector<int> v{dist::get_rank() + 1};
    dist::all_reduce(v, dist::ReduceOp::sum, g);
    EXPECT_EQ(v[0], 6);
    const dist::Group again = dist::reconfigure(g);  // nothing changed: the same group
    dist::barrier(again);
    dist::barrier();  // the world was not aborted
  });
}

TEST(Reconfigure, RefusesAGroupThatIsNotTheMembershipAndABadTimeout) {
  dist::sim::run(world(2), [] {
    const dist::Group pair = dist::new_group({0, 1});
    try {
      (void)dist::reconfigure(pair);
      ADD_FAILURE() << "reconfigure accepted a group new_group made";
    } catch (const dist::InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr("neither the world nor the group reconfigure gave"));
    }
    EXPECT_THROW((void)dist::reconfigure({}, {.timeout = 0ms}), dist::InvalidArgument);
  });
}

// A member that is running but never calls holds the others until their timeout, which names it.
TEST(Reconfigure, AMemberThatNeverComesTimesOutNamingIt) {
  std::vector<std::string> errors(3);
  dist::sim::run(world(3), [&] {
    const int rank = dist::get_rank();
    if (rank == 2) {
      std::this_thread::sleep_for(300ms);  // busy outside dist, past the others' timeout
      return;
    }
    try {
      (void)dist::reconfigure({}, {.timeout = 50ms});
      ADD_FAILURE() << "rank " << rank << "'s reconfigure agreed without rank 2";
    } catch (const dist::TimeoutError& e) {
      errors[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  for (const int r : {0, 1}) {
    EXPECT_THAT(errors[static_cast<std::size_t>(r)],
                HasSubstr("dist::reconfigure() in the membership of epoch 0"));
    EXPECT_THAT(errors[static_cast<std::size_t>(r)], HasSubstr("never arrived: ranks 2"));
  }
}

// What one rank saw of an elastic job: the members of each step's group, its final weight, and its
// restart count when it ended.
struct JobView {
  std::vector<std::vector<int>> members;  // per step
  double weight = 0;
  int restarts = -1;
};

// Data-parallel steps: each step the members reconfigure (the replacement joins at its first),
// rank 0 of a changed group broadcasts the weight and the step, and the members add the mean of
// their gradients (rank + 1). A lost rank's RankFailure repeats the step. The job ends after
// `steps` steps with every rank back (the steps go on until the replacement has joined).
void elastic_job(std::mutex& m, std::vector<JobView>& seen, int steps) {
  const int rank = dist::get_rank();
  dist::Group group;  // the world
  std::vector<double> weight{0.0};
  std::vector<int> step{0};
  std::vector<std::vector<int>> members;
  std::vector<int> last;
  while (step[0] < steps || last.size() < 4) {
    try {
      group = dist::reconfigure(group);
      if (group.ranks() != last) {
        dist::broadcast(weight, 0, group);
        dist::broadcast(step, 0, group);
        last = group.ranks();
      }
      std::vector<double> grad{static_cast<double>(rank + 1)};
      dist::all_reduce(grad, dist::ReduceOp::sum, group);
      weight[0] += grad[0] / static_cast<double>(last.size());
      members.resize(static_cast<std::size_t>(step[0]) + 1);
      members[static_cast<std::size_t>(step[0])] = last;
      ++step[0];
    } catch (const dist::RankFailure&) {
      last.clear();  // the group lost a member: the next reconfigure makes another
    }
  }
  std::lock_guard lock(m);
  auto& mine = seen[static_cast<std::size_t>(rank)];
  mine.members = std::move(members);
  mine.weight = weight[0];
  mine.restarts = dist::restart_count();
}

// The weight a single process computes from a membership schedule.
double expected_weight(const std::vector<std::vector<int>>& schedule) {
  double w = 0;
  for (const auto& members : schedule) {
    double sum = 0;
    for (const int r : members) sum += r + 1;
    w += sum / static_cast<double>(members.size());
  }
  return w;
}

// `survivors_go_on`: whether a step without rank 2 must have run (deterministic runs, where the
// restart's delay is virtual time the survivors' steps pass; a concurrent run's machine may
// stall the survivors for the whole delay).
std::vector<std::vector<int>> check_elastic_run(const dist::sim::Cluster& cluster,
                                                bool survivors_go_on) {
  constexpr int steps = 12;
  std::mutex m;
  std::vector<JobView> seen(4);
  dist::sim::run(cluster, [&] { elastic_job(m, seen, steps); });
  const auto& schedule = seen[0].members;  // rank 0 survives every step
  EXPECT_GE(schedule.size(), static_cast<std::size_t>(steps));
  bool shrank = false;
  for (const auto& members : schedule) shrank = shrank || members == std::vector<int>{0, 1, 3};
  if (survivors_go_on) {
    EXPECT_TRUE(shrank) << "the survivors never went on without rank 2";
  }
  EXPECT_EQ(schedule.back(), (std::vector<int>{0, 1, 2, 3}));
  for (int r = 0; r < 4; ++r) {
    const JobView& s = seen[static_cast<std::size_t>(r)];
    EXPECT_DOUBLE_EQ(s.weight, expected_weight(schedule)) << "rank " << r;
    EXPECT_EQ(s.restarts, r == 2 ? 1 : 0) << "rank " << r;
  }
  // The replacement saw the steps from its joining on, as the others did.
  const auto& replaced = seen[2].members;
  for (std::size_t s = 0; s < replaced.size(); ++s)
    if (!replaced[s].empty()) {
      EXPECT_EQ(replaced[s], schedule[s]) << "step " << s;
    }
  return schedule;
}

TEST(Restart, TheSurvivorsGoOnAndTheReplacementJoinsWithTheWeights) {
  dist::sim::Cluster cluster = world(4);
  cluster.faults = {Fault::restart(2, 3, 5ms)};
  check_elastic_run(cluster, false);
}

TEST(Restart, DeterministicRunsReplayTheSameLifecycleFromASeed) {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    dist::sim::Cluster cluster = world(4);
    cluster.schedule = Schedule::deterministic;
    cluster.seed = seed;
    cluster.faults = {Fault::restart(2, 3, 1ms)};
    const auto first = check_elastic_run(cluster, true);
    EXPECT_EQ(check_elastic_run(cluster, true), first) << "seed " << seed;
  }
}

// A Fault::restart's peers see the killed process named, as a Fault::kill's do.
TEST(Restart, PeersGetARankFailureNamingTheKilledProcess) {
  dist::sim::Cluster cluster = world(3);
  cluster.faults = {Fault::restart(1, 1, 1ms)};
  std::vector<std::string> errors(3);
  dist::sim::run(cluster, [&] {
    const int rank = dist::get_rank();
    if (dist::restart_count() > 0) {
      (void)dist::reconfigure();
      return;
    }
    std::vector<int> v{1};
    try {
      dist::all_reduce(v);
      ADD_FAILURE() << "rank " << rank << "'s all_reduce completed without rank 1";
    } catch (const dist::RankFailure& e) {
      errors[static_cast<std::size_t>(rank)] = e.what();
      EXPECT_EQ(e.failed_ranks(), std::vector<int>{1});
    }
    (void)dist::reconfigure();
  });
  for (const int r : {0, 2})
    EXPECT_THAT(errors[static_cast<std::size_t>(r)],
                HasSubstr("rank 1 was killed at its call #1 (Fault::restart)"));
}

TEST(Lifecycle, ACallOnTheReplacedWorldBeforeJoiningRaisesAbortedNamingIt) {
  dist::sim::Cluster cluster = world(2);
  cluster.schedule = Schedule::deterministic;
  cluster.faults = {Fault::restart(1, 1, 1ms)};
  std::string error;
  dist::sim::run(cluster, [&] {
    if (dist::restart_count() > 0) {
      try {
        dist::barrier();
        ADD_FAILURE() << "the replacement's barrier on the killed process's world ran";
      } catch (const dist::Aborted& e) {
        error = e.what();
      }
      (void)dist::reconfigure();
      return;
    }
    try {
      dist::barrier();
    } catch (const dist::RankFailure&) {
    }
    (void)dist::reconfigure();
  });
  EXPECT_THAT(error, HasSubstr("restart_count() = 1"));
  EXPECT_THAT(error, HasSubstr("call dist::reconfigure() to join the job"));
}

TEST(Lifecycle, ACallOnAGroupAReconfigureReplacedRaisesAborted) {
  dist::sim::Cluster cluster = world(3);
  cluster.schedule = Schedule::deterministic;
  cluster.faults = {Fault::kill(2, 1)};
  const RunError e = failure_of(cluster, [] {
    const int rank = dist::get_rank();
    if (rank == 2) dist::barrier();  // killed here
    try {
      dist::barrier();
    } catch (const dist::RankFailure&) {
    }
    const dist::Group g = dist::reconfigure();
    EXPECT_EQ(g.ranks(), (std::vector<int>{0, 1}));
    try {
      dist::barrier();  // the world, replaced by the membership of epoch 1
      ADD_FAILURE() << "a barrier on the replaced world ran";
    } catch (const dist::Aborted& a) {
      EXPECT_THAT(a.what(), HasSubstr("dist::reconfigure (the membership became epoch 1)"));
    }
    try {
      (void)dist::reconfigure();  // the world again, not the membership's group
      ADD_FAILURE() << "reconfigure accepted the replaced world";
    } catch (const dist::InvalidArgument& i) {
      EXPECT_THAT(i.what(), HasSubstr("pass that group"));
    }
    dist::barrier(dist::reconfigure(g));
  });
  EXPECT_TRUE(e.failed_with<dist::RankFailure>(2));
  EXPECT_TRUE(e.outcomes()[0].ok());
  EXPECT_TRUE(e.outcomes()[1].ok());
}

TEST(Lifecycle, AReplacementThatNeverReconfiguresIsNamed) {
  dist::sim::Cluster cluster = world(2);
  cluster.faults = {Fault::restart(1, 1, 1ms)};
  const RunError e = failure_of(cluster, [] {
    if (dist::restart_count() > 0) return;  // forgets to join
    try {
      dist::barrier();
    } catch (const dist::RankFailure&) {
    }
  });
  EXPECT_TRUE(e.outcomes()[0].ok());
  EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(1));
  EXPECT_THAT(e.outcomes()[1].message,
              HasSubstr("rank 1's replacement (restart_count() = 1) returned without calling "
                        "dist::reconfigure()"));
}

// Survivors that disagree on whom they exclude get a DesyncError, from shrink_group or from
// their first call on the group, rather than waiting for a rank that is not coming.
TEST(Lifecycle, SurvivorsWhoseShrinkListsDifferGetADesyncError) {
  for (const Schedule schedule : {Schedule::concurrent, Schedule::deterministic}) {
    dist::sim::Cluster cluster = world(4);
    cluster.schedule = schedule;
    cluster.faults = {Fault::kill(3, 1)};
    std::vector<std::string> errors(4);
    const RunError e = failure_of(cluster, [&] {
      const int rank = dist::get_rank();
      if (rank == 3) dist::barrier();  // killed here
      try {
        dist::barrier();
      } catch (const dist::RankFailure&) {
      }
      // Rank 2 also excludes rank 1; ranks 0 and 1 exclude only rank 3.
      const std::vector<int> excluded = rank == 2 ? std::vector<int>{1, 3} : std::vector<int>{3};
      try {
        const dist::Group g = dist::shrink_group({}, excluded, {.abort_parent = true});
        dist::barrier(g);
        ADD_FAILURE() << "rank " << rank << "'s barrier on a disputed group completed";
      } catch (const dist::DesyncError& d) {
        errors[static_cast<std::size_t>(rank)] = d.what();
      }
    });
    EXPECT_TRUE(e.failed_with<dist::RankFailure>(3));
    for (const int r : {0, 1, 2}) {
      EXPECT_THAT(errors[static_cast<std::size_t>(r)],
                  HasSubstr("every survivor passes the same excluded_ranks"))
          << "rank " << r;
      EXPECT_THAT(errors[static_cast<std::size_t>(r)], HasSubstr("ranks 0-2"));
    }
  }
}

}  // namespace
