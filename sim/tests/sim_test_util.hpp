// Helpers of the sim tests: cluster shapes, the sizes, roots and data forms the collectives are
// checked at, any-bits inputs; the reference bridge itself is testing/'s.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "testing/inputs.hpp"
#include "testing/typed_tests.hpp"

namespace sim_test {

using namespace test_support;

inline dist::sim::Cluster cluster(int nodes, int ranks_per_node) {
  dist::sim::Cluster c;
  c.nodes = nodes;
  c.ranks_per_node = ranks_per_node;
  return c;
}
inline dist::sim::Cluster world(int n) { return cluster(1, n); }

// The RunError of a run that must fail (a test failure, and an empty error, when it does not).
inline dist::sim::RunError failure_of(const dist::sim::Cluster& cluster,
                                      const std::function<void()>& body) {
  try {
    dist::sim::run(cluster, body);
  } catch (const dist::sim::RunError& e) {
    return e;
  }
  ADD_FAILURE() << "the run did not fail";
  return dist::sim::RunError(dist::ErrorCode::invalid_argument, "", {});
}

// The world sizes and per-rank counts every collective is checked at.
inline constexpr int world_sizes[] = {1, 2, 3, 8};
inline constexpr std::size_t counts[] = {0, 1, 7, 100003};

// The roots of rooted collectives checked at world size n: every root at 3.
inline std::vector<int> roots_at(int n) {
  if (n == 3) return {2, 0, 1};
  if (n == 8) return {5, 0};
  return {n - 1};
}
// The counts checked at world size n: the large one at 3 and 8 ranks only (to keep the suite fast).
inline std::vector<std::size_t> counts_at(int n) {
  if (n == 3 || n == 8) return {std::begin(counts), std::end(counts)};
  return {0, 1, 7};
}
// The counts checked at `root`: the large count at the first root of roots_at(n) only.
inline std::vector<std::size_t> counts_for_root(int n, int root) {
  if (root == roots_at(n).front()) return counts_at(n);
  return {0, 1, 7};
}
// Chunk sizes (elements per rank's chunk) of reduce_scatter and all_to_all at world size n.
inline std::vector<std::size_t> chunks_at(int n) {
  if (n == 3 || n == 8) return {0, 1, 7, 12501};
  return {0, 1, 7};
}

template <class T> std::vector<T> input(int rank, std::size_t count, std::uint64_t salt = 0) {
  return any_bits_input<T>(rank, count, salt);
}

// The base of the typed tests: drops the cached inputs after each test.
class Test : public ::testing::Test {
 protected:
  void TearDown() override { clear_input_cache(); }
};

template <class T> std::vector<std::vector<T>> inputs(int n, std::size_t count,
                                                      std::uint64_t salt = 0) {
  std::vector<std::vector<T>> out;
  for (int r = 0; r < n; ++r) out.push_back(input<T>(r, count, salt));
  return out;
}

template <class T> std::vector<T> values_of(const dist::Tensor& t) {
  auto v = t.values<T>();
  return {v.begin(), v.end()};
}

// Flattens a list of parts (all_gather, gather results).
template <class T> std::vector<T> concat(const std::vector<std::vector<T>>& parts) {
  std::vector<T> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Inside a rank: fails the rank (and so the run) with `what` unless `ok`.
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

inline std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// A Tensor shape holding `count` elements: 2-D for some counts, so shapes are checked.
inline std::vector<std::int64_t> shape_for(std::size_t count) {
  const auto c = static_cast<std::int64_t>(count);
  if (count == 0) return {2, 0};
  if (count == 7) return {7, 1};
  return {c};
}

// The three data forms every collective accepts.
enum class Form { vector, span, tensor };
inline constexpr Form forms[] = {Form::vector, Form::span, Form::tensor};
inline const char* to_string(Form f) {
  return f == Form::vector ? "vector" : f == Form::span ? "span" : "tensor";
}
// The forms checked at `count`: all three for small counts, one (rotating with `k`) for large.
inline std::vector<Form> forms_at(std::size_t count, std::size_t k) {
  if (count < 1000) return {Form::vector, Form::span, Form::tensor};
  return {forms[k % 3]};
}

// The RunError a run that must fail throws (nothing if it did not fail that way).
template <class F> std::optional<dist::sim::RunError> run_error(const dist::sim::Cluster& c, F&& f) {
  try {
    dist::sim::run(c, std::forward<F>(f));
  } catch (const dist::sim::RunError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace sim_test
