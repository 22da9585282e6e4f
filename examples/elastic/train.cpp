// The elastic example's training loop (train.hpp).
#include "train.hpp"

#include <stdexcept>

#include "dist/fault_tolerance.hpp"

namespace elastic {

Trained train(const Plan& plan) {
  const int rank = dist::get_rank();
  Trained t;
  Vec state(features + 1, 0.0);  // the weights, then the step
  std::vector<int> last;
  // Every member sees the same step and membership, so they stop together.
  const auto done = [&] {
    if (state[features] < plan.steps) return false;
    if (!plan.until_whole || last.size() == world) return true;
    if (Clock::now() - plan.started > plan.whole_within)
      throw std::runtime_error("the world was not whole again within " +
                               std::to_string(plan.whole_within.count()) + " s");
    return false;
  };
  while (!done()) {
    const int step = static_cast<int>(state[features]);
    try {
      t.group = dist::reconfigure(t.group);  // the world at first (a replacement's too)
      if (t.group.ranks() != last) {  // the membership changed: rank 0 of it shares the state
        dist::broadcast(state, 0, t.group);
        if (!last.empty() || step > 0)
          t.events.push_back("step " + std::to_string(static_cast<int>(state[features])) + ": " +
                             std::to_string(t.group.ranks().size()) +
                             " ranks go on: " + list(t.group.ranks()));
        last = t.group.ranks();
      }
      if (plan.before_all_reduce) plan.before_all_reduce(static_cast<int>(state[features]));
      Vec g = gradient(rank, Vec(state.begin(), state.begin() + features));
      dist::all_reduce(g, dist::ReduceOp::sum, t.group);
      if (t.first_step < 0) t.first_step = static_cast<int>(state[features]);
      for (std::size_t k = 0; k < features; ++k)
        state[k] -= learning_rate * g[k] / static_cast<double>(last.size());
      t.schedule.push_back(last);
      state[features] += 1;
    } catch (const dist::RankFailure& lost) {
      t.events.push_back("step " + std::to_string(step) + ": lost rank " +
                         list(lost.failed_ranks()) + " (" + lost.what() + ")");
      last.clear();  // the next reconfigure leaves the lost rank out
    }
  }
  t.weights = Vec(state.begin(), state.begin() + features);
  return t;
}

Vec replay(const std::vector<std::vector<int>>& schedule) {
  Vec w(features, 0.0);
  for (const auto& members : schedule) step_over(w, members);
  return w;
}

bool shrank_and_grew_back(const std::vector<std::vector<int>>& schedule) {
  bool shrank = false;
  for (const auto& members : schedule) {
    shrank = shrank || members.size() < world;
    if (shrank && members.size() == world) return true;
  }
  return false;
}

}  // namespace elastic
