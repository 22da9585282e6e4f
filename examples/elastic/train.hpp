// The elastic example's training loop, the same on sim and under a launcher: every step each
// member reconfigures first (which lets a waiting replacement in), rank 0 of a changed membership
// shares the weights and the step by broadcast, then the members all_reduce their gradients.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "sgd.hpp"

namespace elastic {

using Clock = std::chrono::steady_clock;

struct Plan {
  int steps = elastic::steps;
  // Under a launcher the replacement's restart takes real time: the job goes on past `steps`
  // until the world is whole again, for at most `whole_within`.
  bool until_whole = false;
  std::chrono::seconds whole_within{60};
  // Called before each step's all_reduce (the real run's kill -9 of rank 2).
  std::function<void(int step)> before_all_reduce;
  Clock::time_point started = Clock::now();  // whole_within counts from here
};

struct Trained {
  std::vector<std::vector<int>> schedule;  // the members of each step this process ran
  Vec weights;                             // its final weights
  std::vector<std::string> events;         // what it saw happen, in order
  dist::Group group;                       // the membership it ended in
  int first_step = -1;                     // the step of its first all_reduce
};

Trained train(const Plan& plan);

// The weights a single process computes over `schedule`, and whether the schedule shrank below
// the world and grew back to it.
Vec replay(const std::vector<std::vector<int>>& schedule);
bool shrank_and_grew_back(const std::vector<std::vector<int>>& schedule);

}  // namespace elastic
