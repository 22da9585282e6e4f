// An elastic data-parallel job that survives a lost rank: SGD on a least-squares model over 4
// ranks. Rank 2's process is killed in step 5 and restarted: on sim by a Fault::restart (1 ms
// later, virtual time); with --launcher pytorch (under `distrun -n 4 --max-restarts 1`) by a real
// kill -9 of itself, the launcher starting its replacement, which pauses 1 s before joining. The
// survivors see it named (RankFailure), reconfigure to 3 and go on; the replacement
// (dist::restart_count() == 1) calls dist::reconfigure() to join, gets the weights and the step by
// broadcast and goes on with them. Self-checking: every rank's final weights equal a single
// process's computation over the same membership schedule, and the schedule shrank to 3 and grew
// back to 4. On sim the deterministic schedule replays the whole lifecycle from the seed.
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../common/launch_option.hpp"
#include "dist/dist.hpp"
#include "dist/fault_tolerance.hpp"
#include "dist/sim.hpp"
#include "train.hpp"

namespace {

using namespace elastic;

constexpr int lost_rank = 2;
constexpr int lost_at_step = 5;
// On sim, rank 2's calls: step 0 broadcasts the state (call 1) and all_reduces (call 2); steps
// 1..4 one all_reduce each (calls 3..6); step 5's all_reduce is its call 7.
constexpr int lost_at_call = 7;
constexpr std::chrono::milliseconds rejoin_pause{1000};

// Prints rank 0's events and the check; true when every rank's weights equal the replay of rank
// 0's schedule (exactly on sim, whose sums run in rank order; within 1e-12 elsewhere).
bool report(const Trained& rank0, const std::vector<Vec>& weights, bool exact) {
  for (const std::string& e : rank0.events) std::printf("  %s\n", e.c_str());
  const Vec expected = replay(rank0.schedule);
  bool ok = shrank_and_grew_back(rank0.schedule) && weights.size() == world;
  for (const Vec& w : weights)
    for (std::size_t k = 0; k < features && ok; ++k)
      ok = exact ? w[k] == expected[k] : std::abs(w[k] - expected[k]) <= 1e-12;
  std::printf(
      "weights {%.6f, %.6f, %.6f} on every rank, %s the single-process computation over the "
      "same membership schedule\n",
      expected[0], expected[1], expected[2], ok ? "equal to" : "NOT equal to");
  return ok;
}

int run_sim() {
  dist::sim::Cluster cluster{.nodes = 1, .ranks_per_node = world, .seed = 7};
  cluster.schedule = dist::sim::Schedule::deterministic;
  cluster.faults = {
      dist::sim::Fault::restart(lost_rank, lost_at_call, std::chrono::milliseconds(1))};
  std::printf(
      "elastic: %d ranks, %d steps of data-parallel SGD on sim; rank %d's process is killed "
      "at its call %d and restarted 1 ms later\n",
      world, steps, lost_rank, lost_at_call);
  std::mutex m;
  Trained rank0;
  std::vector<Vec> weights(world);
  try {
    dist::sim::run(cluster, [&] {
      Trained t = train({});
      std::lock_guard lock(m);
      weights[static_cast<std::size_t>(dist::get_rank())] = t.weights;
      if (dist::get_rank() == 0) rank0 = std::move(t);
    });
  } catch (const dist::Error& e) {
    std::fprintf(stderr, "elastic: the run failed: %s\n", e.what());
    return 1;
  }
  return report(rank0, weights, true) && rank0.schedule.size() == steps ? 0 : 1;
}

// One process of a real world (init_dist under the launcher). Rank 2 kills itself before step
// 5's all_reduce; its replacement says at which step it joined.
int run_real(const examples::LaunchOption& option) {
  dist::init_dist(option.launcher, option.backend);
  const int rank = dist::get_rank();
  if (dist::get_world_size() != world) {
    std::fprintf(stderr, "elastic: needs %d ranks, got %d\n", world, dist::get_world_size());
    return 2;
  }
  if (rank == 0)
    std::printf(
        "elastic: %d ranks, %d or more steps of data-parallel SGD on %s; rank %d kills itself "
        "(SIGKILL) in step %d and the launcher restarts it\n",
        world, steps, std::string(dist::to_string(option.backend)).c_str(), lost_rank,
        lost_at_step);
  Plan plan;
  plan.until_whole = true;
  plan.before_all_reduce = [rank](int step) {
    if (rank == lost_rank && step == lost_at_step && dist::restart_count() == 0) ::raise(SIGKILL);
  };
  // A restarted machine takes a while: the replacement pauses before joining, so the survivors
  // go on as 3 first (distrun restarts a process within milliseconds of its loss).
  if (dist::restart_count() > 0) std::this_thread::sleep_for(rejoin_pause);
  const Trained t = train(plan);
  if (dist::restart_count() > 0)
    std::printf("rank %d (restart %d) joined at step %d\n", rank, dist::restart_count(),
                t.first_step);
  const auto weights = dist::all_gather_object(t.weights, t.group);
  const bool ok = rank != 0 || report(t, weights, false);
  dist::destroy_dist();
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const auto option = examples::parse_launch_option(argc, argv, "elastic");
  return option.real() ? run_real(option) : run_sim();
}
