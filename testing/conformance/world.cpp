// The sizes and roots every backend's conformance cases are checked at, from its world runner.
#include "testing/conformance/world.hpp"

#include <algorithm>

namespace conformance {

namespace {
bool large_at(int n) { return n >= world_runner().large_from_world; }
}  // namespace

std::vector<std::size_t> counts_at(int n) {
  if (!large_at(n)) return {0, 1, 7};
  return {0, 1, 7, world_runner().large_count};
}

std::vector<std::size_t> chunks_at(int n) {
  if (!large_at(n)) return {0, 1, 7};
  return {0, 1, 7, world_runner().large_chunk};
}

std::vector<int> roots_at(int n) {
  if (n > 4) return {n - 3, 0};
  std::vector<int> roots{n - 1};
  for (int r = 0; r < n - 1; ++r) roots.push_back(r);
  return roots;
}

std::vector<std::size_t> counts_for_root(int n, int root) {
  if (root == roots_at(n).front() || world_runner().large_count < 10000) return counts_at(n);
  return {0, 1, 7};
}

std::optional<std::string> lacks_world(int n) {
  const WorldRunner& w = world_runner();
  if (w.can_make(n)) return std::nullopt;
  return "needs a world of " + std::to_string(n) + " ranks; " + w.name + " makes " +
         std::to_string(w.min_size) + ".." + std::to_string(w.max_size) + " here";
}

}  // namespace conformance
