// Helpers of the gloo tests: run a function on n gloo ranks (threads of this process) and
// collect each rank's result; testing/'s reference bridge and inputs with it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "dist/dist.hpp"
#include "real/testing.hpp"
#include "reference/collectives.hpp"
#include "testing/inputs.hpp"
#include "testing/typed_tests.hpp"

namespace gloo_test {

using namespace std::chrono_literals;
namespace ref = dist::reference;
using namespace test_support;

inline constexpr std::chrono::milliseconds default_timeout = 60s;

// Runs fn() on each of n gloo ranks; returns the results in rank order (rethrows a rank's error).
template <class F> auto run(int n, F fn, std::chrono::milliseconds timeout = default_timeout) {
  using R = std::invoke_result_t<F&>;
  std::vector<std::optional<R>> slots(static_cast<std::size_t>(n));
  dist::real::run_thread_world_or_throw(dist::Backend::gloo, n, timeout, [&](int rank) {
    slots[static_cast<std::size_t>(rank)].emplace(fn());
  });
  std::vector<R> results;
  for (auto& s : slots) results.push_back(std::move(*s));
  return results;
}

}  // namespace gloo_test
