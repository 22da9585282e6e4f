// An elastic data-parallel job that survives a lost rank: SGD on a least-squares model over 4
// ranks of a simulated cluster. Rank 2's process is killed in step 5 (a Fault::restart) and
// restarted 1 ms later (virtual time). The survivors see it named (RankFailure), reconfigure to 3
// and go on; the replacement (dist::restart_count() == 1) calls dist::reconfigure() to join, gets
// the weights and the step by broadcast and goes on with them. Every step each member reconfigures
// first, which lets a waiting replacement in. Self-checking: every rank's final weights equal a
// single process's computation over the same membership schedule, and the schedule shrank to 3
// and grew back to 4. The deterministic schedule replays the whole lifecycle from the seed.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim.hpp"

namespace {

constexpr int world = 4;
constexpr int steps = 300;
constexpr int features = 3;
constexpr double learning_rate = 0.05;
// Rank 2's calls: step 0 broadcasts the state (call 1) and all_reduces (call 2); steps 1..4 one
// all_reduce each (calls 3..6); step 5's all_reduce is its call 7.
constexpr int lost_rank = 2;
constexpr int lost_at_call = 7;

using Vec = std::vector<double>;

// Rank r's data: two samples whose targets come from the weights {1, -2, 0.5}.
void sample(int rank, int i, Vec& x, double& y) {
  x = {1.0, 0.1 * rank + 0.05 * i, 0.2 * i - 0.03 * rank};
  y = 1.0 * x[0] - 2.0 * x[1] + 0.5 * x[2];
}

// The gradient of rank r's squared error at `w`.
Vec gradient(int rank, const Vec& w) {
  Vec g(features, 0.0);
  for (int i = 0; i < 2; ++i) {
    Vec x;
    double y = 0;
    sample(rank, i, x, y);
    double err = -y;
    for (int k = 0; k < features; ++k)
      err += w[static_cast<std::size_t>(k)] * x[static_cast<std::size_t>(k)];
    for (int k = 0; k < features; ++k)
      g[static_cast<std::size_t>(k)] += err * x[static_cast<std::size_t>(k)];
  }
  return g;
}

// One step over `members`: the mean of their gradients (summed in rank order, as the sim's
// all_reduce sums them).
void step_over(Vec& w, const std::vector<int>& members) {
  Vec sum(features, 0.0);
  for (const int r : members) {
    const Vec g = gradient(r, w);
    for (int k = 0; k < features; ++k)
      sum[static_cast<std::size_t>(k)] += g[static_cast<std::size_t>(k)];
  }
  for (int k = 0; k < features; ++k)
    w[static_cast<std::size_t>(k)] -=
        learning_rate * sum[static_cast<std::size_t>(k)] / static_cast<double>(members.size());
}

std::string list(const std::vector<int>& ranks) {
  std::string out = "{";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "}";
}

struct Result {
  std::vector<std::vector<int>> schedule;  // the members of each step (rank 0's view)
  std::vector<Vec> weights;                // each rank's final weights
  std::vector<std::string> events;         // what rank 0 saw happen, in order
};

void train(std::mutex& m, Result& result) {
  const int rank = dist::get_rank();
  dist::Group group;             // the world (a replacement's too: reconfigure makes it join)
  Vec state(features + 1, 0.0);  // the weights, then the step
  std::vector<int> last;
  std::vector<std::vector<int>> schedule;
  std::vector<std::string> events;
  while (state[features] < steps) {
    const int step = static_cast<int>(state[features]);
    try {
      group = dist::reconfigure(group);
      if (group.ranks() != last) {  // the membership changed: rank 0 of it shares the state
        dist::broadcast(state, 0, group);
        if (!last.empty() || step > 0)
          events.push_back("step " + std::to_string(static_cast<int>(state[features])) + ": " +
                           std::to_string(group.ranks().size()) +
                           " ranks go on: " + list(group.ranks()));
        last = group.ranks();
      }
      Vec w(state.begin(), state.begin() + features);
      Vec g = gradient(rank, w);
      dist::all_reduce(g, dist::ReduceOp::sum, group);
      for (int k = 0; k < features; ++k)
        state[static_cast<std::size_t>(k)] -=
            learning_rate * g[static_cast<std::size_t>(k)] / static_cast<double>(last.size());
      schedule.push_back(last);
      state[features] += 1;
    } catch (const dist::RankFailure& lost) {
      events.push_back("step " + std::to_string(step) + ": lost rank " + list(lost.failed_ranks()) +
                       " (" + lost.what() + ")");
      last.clear();  // the next reconfigure leaves the lost rank out
    }
  }
  std::lock_guard lock(m);
  result.weights[static_cast<std::size_t>(rank)] = Vec(state.begin(), state.begin() + features);
  if (rank == 0) {
    result.schedule = std::move(schedule);
    result.events = std::move(events);
  }
}

}  // namespace

int main() {
  dist::sim::Cluster cluster{.nodes = 1, .ranks_per_node = world, .seed = 7};
  cluster.schedule = dist::sim::Schedule::deterministic;
  cluster.faults = {
      dist::sim::Fault::restart(lost_rank, lost_at_call, std::chrono::milliseconds(1))};
  std::printf(
      "elastic: %d ranks, %d steps of data-parallel SGD on sim; rank %d's process is killed "
      "at its call %d and restarted 1 ms later\n",
      world, steps, lost_rank, lost_at_call);
  std::mutex m;
  Result result;
  result.weights.resize(world);
  try {
    dist::sim::run(cluster, [&] { train(m, result); });
  } catch (const dist::Error& e) {
    std::fprintf(stderr, "elastic: the run failed: %s\n", e.what());
    return 1;
  }
  for (const std::string& e : result.events) std::printf("  %s\n", e.c_str());
  Vec expected(features, 0.0);
  bool shrank = false, regrew = false;
  for (const auto& members : result.schedule) {
    step_over(expected, members);
    shrank = shrank || members.size() == world - 1;
    regrew = regrew || (shrank && members.size() == world);
  }
  bool ok = shrank && regrew && result.schedule.size() == steps;
  for (int r = 0; r < world; ++r)
    ok = ok && result.weights[static_cast<std::size_t>(r)] == expected;
  std::printf(
      "weights {%.6f, %.6f, %.6f} on every rank, %s the single-process computation over the "
      "same membership schedule\n",
      expected[0], expected[1], expected[2], ok ? "equal to" : "NOT equal to");
  return ok ? 0 : 1;
}
