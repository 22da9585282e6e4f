// The conformance suite's view of a backend: a world runner (run n ranks, each calling fn(rank)
// with its dist:: context bound) and the sizes, inputs and data forms it is checked with. Each
// backend's tests folder defines conformance::world_runner(); the suite's cases are written once.
#pragma once

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dist/dist.hpp"
#include "testing/inputs.hpp"
#include "testing/typed_tests.hpp"

namespace conformance {

using namespace test_support;

enum class Inputs {
  exact_sum,  // equal in every reduction order: for backends that reduce in their own order
  any_bits,   // edge values and random bits: for backends that fold in rank order (sim)
};

struct WorldRunner {
  std::string name;
  // Why the backend cannot run here ("" when it can): the reason every case skips with.
  std::function<std::string()> unavailable = [] { return std::string(); };
  // Runs fn(rank) on each rank of a world of n, with that rank's dist:: context bound; throws
  // (naming the ranks) when a rank failed. A process-per-rank backend runs only this process's
  // rank of the current world: its cases then check only that rank's results.
  std::function<void(int n, const std::function<void(int rank)>& fn)> run;
  int min_size = 1;         // the worlds it can make: min_size..max_size ranks
  int max_size = INT_MAX;
  std::vector<int> world_sizes;  // the worlds the typed cases sweep
  Inputs inputs = Inputs::exact_sum;
  std::size_t large_count = 1000;  // the largest per-rank count (and large_chunk per chunk)
  std::size_t large_chunk = 250;
  int large_from_world = 1;        // the large counts only at worlds of at least this many ranks
  std::size_t huge_count = 0;      // a multi-megabyte all_reduce and broadcast (0: not run)
  bool device_form = false;        // data also as tensors on the communication device
  double float_mean_tolerance = 0; // how far a floating mean may round from sum / n
  std::string p2p_skip;            // why its p2p cases do not apply ("" when they do)

  bool can_make(int n) const { return n >= min_size && n <= max_size; }
  // The smallest world of at least n ranks it can make, if any.
  std::optional<int> world_of_at_least(int n) const {
    const int m = std::max(n, min_size);
    if (m > max_size) return std::nullopt;
    return m;
  }
};

// Defined once per backend (its tests folder's conformance_<backend>.cpp).
const WorldRunner& world_runner();

// Rank r's result of fn, for each rank this process ran (every rank, or only its own).
template <class R> using RankResults = std::vector<std::pair<int, R>>;

template <class F> auto run_world(int n, F fn) {
  using R = std::invoke_result_t<F&>;
  std::vector<std::optional<R>> slots(static_cast<std::size_t>(n));
  world_runner().run(n, [&](int rank) { slots[static_cast<std::size_t>(rank)].emplace(fn()); });
  RankResults<R> out;
  for (int r = 0; r < n; ++r)
    if (auto& s = slots[static_cast<std::size_t>(r)]) out.emplace_back(r, std::move(*s));
  return out;
}

// Rank `rank`'s input of case `salt`, of the runner's kind.
template <class T> std::vector<T> input(int rank, std::size_t count, std::uint64_t salt = 0) {
  if (world_runner().inputs == Inputs::any_bits) return any_bits_input<T>(rank, count, salt);
  return exact_sum_input<T>(rank, count, salt);
}
template <class T> PerRank<T> inputs(int n, std::size_t count, std::uint64_t salt = 0) {
  PerRank<T> out;
  for (int r = 0; r < n; ++r) out.push_back(input<T>(r, count, salt));
  return out;
}

// The counts, chunks and roots checked at world size n. Roots: every root up to 4 ranks (the last
// first), else two; the large count at the first root only, when it is large.
std::vector<std::size_t> counts_at(int n);
std::vector<std::size_t> chunks_at(int n);
std::vector<int> roots_at(int n);
std::vector<std::size_t> counts_for_root(int n, int root);

// How far element results of `op` may be from the reference for T.
template <class T> double tolerance(dist::ReduceOp op) {
  if (op != dist::ReduceOp::mean || !is_float_v<T>) return 0;
  const double t = world_runner().float_mean_tolerance;
  if constexpr (std::is_same_v<T, dist::bfloat16>) return t * 5000;
  if constexpr (std::is_same_v<T, dist::float16>) return t * 1000;
  if constexpr (std::is_same_v<T, float>) return t;
  return t * 1e-7;
}

// Compares each rank's result with the reference's for that rank (bit for bit, or within tol).
template <class T>
void expect_ranks(const RankResults<std::vector<T>>& got, const PerRank<T>& expected,
                  const std::string& what, double tol = 0) {
  for (const auto& [rank, v] : got)
    if (auto m = differences(v, expected[static_cast<std::size_t>(rank)], tol))
      ADD_FAILURE() << world_runner().name << ": " << what << ", rank " << rank << ": " << *m;
}

// Inside a rank: fails the rank (and so the run) with `what` unless `ok`.
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// The base of the suite's tests: skips (saying why) where the backend cannot run; drops the cached
// inputs after each test.
class Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto why = world_runner().unavailable(); !why.empty()) GTEST_SKIP() << why;
  }
  void TearDown() override { clear_input_cache(); }
};

// Why a world of n ranks cannot be made here (nothing when it can): a test skips with it.
std::optional<std::string> lacks_world(int n);

}  // namespace conformance
