// The elastic example's model (sgd.hpp).
#include "sgd.hpp"

namespace elastic {

namespace {
// Rank r's sample i and its target.
void sample(int rank, int i, Vec& x, double& y) {
  x = {1.0, 0.1 * rank + 0.05 * i, 0.2 * i - 0.03 * rank};
  y = 1.0 * x[0] - 2.0 * x[1] + 0.5 * x[2];
}
}  // namespace

Vec gradient(int rank, const Vec& w) {
  Vec g(features, 0.0);
  for (int i = 0; i < 2; ++i) {
    Vec x;
    double y = 0;
    sample(rank, i, x, y);
    double err = -y;
    for (std::size_t k = 0; k < features; ++k) err += w[k] * x[k];
    for (std::size_t k = 0; k < features; ++k) g[k] += err * x[k];
  }
  return g;
}

void step_over(Vec& w, const std::vector<int>& members) {
  Vec sum(features, 0.0);
  for (const int r : members) {
    const Vec g = gradient(r, w);
    for (std::size_t k = 0; k < features; ++k) sum[k] += g[k];
  }
  for (std::size_t k = 0; k < features; ++k)
    w[k] -= learning_rate * sum[k] / static_cast<double>(members.size());
}

std::string list(const std::vector<int>& ranks) {
  std::string out = "{";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "}";
}

}  // namespace elastic
