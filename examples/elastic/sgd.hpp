// The elastic example's model: least-squares SGD where rank r holds two samples whose targets come
// from the weights {1, -2, 0.5}, and the single-process step the check replays.
#pragma once

#include <string>
#include <vector>

namespace elastic {

constexpr int world = 4;
constexpr int steps = 300;
constexpr int features = 3;
constexpr double learning_rate = 0.05;

using Vec = std::vector<double>;

// The gradient of rank r's squared error at `w`.
Vec gradient(int rank, const Vec& w);
// One step over `members`: the mean of their gradients (summed in rank order).
void step_over(Vec& w, const std::vector<int>& members);
// "{0, 1, 3}"
std::string list(const std::vector<int>& ranks);

}  // namespace elastic
