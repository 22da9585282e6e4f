// Argument checks of the reference collectives, all in one place. Each throws
// std::invalid_argument whose message names the collective, the argument and the values.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dist::reference {

// One input (or output) buffer per rank; the index is the rank.
template <class T>
using PerRank = std::vector<std::vector<T>>;

namespace detail {

[[noreturn]] inline void invalid(std::string_view where, const std::string& what) {
  throw std::invalid_argument(std::string(where) + ": " + what);
}

inline void check_world(std::string_view where, std::size_t world) {
  if (world < 1) invalid(where, "world size must be >= 1, got " + std::to_string(world));
}

inline void check_world(std::string_view where, int world) {
  if (world < 1) invalid(where, "world size must be >= 1, got " + std::to_string(world));
}

inline void check_root(std::string_view where, int root, std::size_t world) {
  if (root < 0 || static_cast<std::size_t>(root) >= world)
    invalid(where, "root " + std::to_string(root) + " is out of range [0, " +
                       std::to_string(world) + ")");
}

// Checks world >= 1 and that every rank's count equals rank 0's; returns that count.
template <class T>
std::size_t check_counts(std::string_view where, const PerRank<T>& in) {
  check_world(where, in.size());
  const std::size_t count = in[0].size();
  for (std::size_t r = 1; r < in.size(); ++r) {
    if (in[r].size() != count)
      invalid(where, "rank " + std::to_string(r) + " has count " + std::to_string(in[r].size()) +
                         " but rank 0 has count " + std::to_string(count));
  }
  return count;
}

inline void check_divisible(std::string_view where, std::size_t count, std::size_t world) {
  if (count % world != 0)
    invalid(where, "count " + std::to_string(count) + " is not divisible by world size " +
                       std::to_string(world));
}

}  // namespace detail
}  // namespace dist::reference
