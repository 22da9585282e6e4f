// The shape of a conformance case: each rank runs every case of one collective in order and
// returns its results; the expected results come from reference/ and are compared rank by rank.
#pragma once

#include <string>
#include <vector>

#include "testing/conformance/forms.hpp"
#include "testing/conformance/world.hpp"

namespace conformance {

// What case c must give: every rank's result, a label for the report, and a tolerance.
template <class T> struct Expected {
  PerRank<T> values;
  std::string label;
  double tol = 0;
};

// For each world size of the runner: runs per_rank(n) on its ranks, makes expected_of(n), and
// reports every case and rank that differs (nccl-tests style: how many elements are wrong).
template <class T, class PerRankFn, class ExpectedFn>
void check_cases(const std::string& name, PerRankFn per_rank, ExpectedFn expected_of) {
  for (int n : world_runner().world_sizes) {
    const auto got = run_world(n, [&] { return per_rank(n); });
    const std::vector<Expected<T>> expected = expected_of(n);
    for (const auto& [rank, outs] : got) {
      ASSERT_EQ(outs.size(), expected.size()) << name << ", world " << n << ", rank " << rank;
      for (std::size_t c = 0; c < expected.size(); ++c) {
        const auto& e = expected[c];
        if (auto m = differences(outs[c], e.values[static_cast<std::size_t>(rank)], e.tol))
          ADD_FAILURE() << world_runner().name << ": " << name << ", world " << n << ", " << e.label
                        << ", rank " << rank << ": " << *m;
      }
    }
  }
}

// Repeats `e` once per form of forms_at(count, k) (the ranks ran the case in each form).
template <class T>
void add_per_form(std::vector<Expected<T>>& out, const Expected<T>& e, std::size_t count, std::size_t k) {
  for (Form f : forms_at(count, k)) {
    out.push_back(e);
    out.back().label += std::string(", form ") + to_string(f);
  }
}

// The base of the p2p cases: they also skip where the runner says its p2p does not apply.
class P2PTest : public conformance::Test {
 protected:
  void SetUp() override {
    conformance::Test::SetUp();
    if (!IsSkipped() && !world_runner().p2p_skip.empty()) GTEST_SKIP() << world_runner().p2p_skip;
  }
};

}  // namespace conformance
