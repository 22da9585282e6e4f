// Runs rapidcheck properties inside GoogleTest with the suite's case budget, and runs backends
// under a watchdog so a hang fails loudly instead of stalling CI. A failing property prints the
// RC_PARAMS value that reproduces it (rapidcheck's own message, passed through unchanged).
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "props/backends.hpp"

namespace props {

// Cases per property: the CI budget given in code, scaled by DIST_PROPS_BUDGET ("ci" = 1x,
// "nightly" = 20x, or a number N = N x) and by the backend's case_percent. RC_PARAMS=max_success=N
// overrides all of them.
inline int case_budget(int ci_cases) {
  if (const char* rc = std::getenv("RC_PARAMS");
      rc && std::string(rc).find("max_success") != std::string::npos)
    return rc::detail::configuration().testParams.maxSuccess;
  ci_cases = std::max(1, ci_cases * current_case_percent() / 100);
  const char* budget = std::getenv("DIST_PROPS_BUDGET");
  if (!budget || std::string(budget).empty() || std::string(budget) == "ci") return ci_cases;
  if (std::string(budget) == "nightly") return ci_cases * 20;
  const int factor = std::atoi(budget);
  if (factor < 1) {
    std::fprintf(stderr, "DIST_PROPS_BUDGET=%s: expected ci, nightly or a positive factor\n",
                 budget);
    std::abort();
  }
  return ci_cases * factor;
}

// Checks `testable` (a rapidcheck property) as the body of the current GoogleTest test, with
// case_budget(ci_cases) cases; the test id is the GoogleTest name, as RC_GTEST_PROP does, so
// RC_PARAMS=reproduce=... replays it.
template <class Testable>
void check(int ci_cases, Testable&& testable) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  auto params = rc::detail::configuration().testParams;
  params.maxSuccess = case_budget(ci_cases);
  const auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  std::ostringstream report;
  rc::detail::printResultMessage(result, report);
  if (result.template is<rc::detail::SuccessResult>()) {
    std::cout << report.str() << std::endl;
    return;
  }
  rc::detail::FailureResult failure;
  if (result.match(failure)) {
    // The RC_PARAMS that replays exactly the shrunk case of this property.
    rc::detail::Configuration replay = rc::detail::configuration();
    replay.reproduce = {{metadata.id, failure.reproduce}};
    report << "\nReplay: RC_PARAMS=\"" << rc::detail::configToMinimalString(replay)
           << "\" dist_props --gtest_filter='" << info->test_suite_name() << "." << info->name()
           << "'";
  }
  FAIL() << report.str();
}

// A run that never ended: says what hung and how to replay it, then ends the test process (the
// stuck rank threads cannot be stopped, and shrinking through hangs would take too long).
[[noreturn]] inline void report_hang(std::string_view backend, const WorldShape& shape,
                                     std::chrono::milliseconds deadline,
                                     const std::string& context) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::cerr << "\nHANG: a " << backend << " run on " << shape << " did not end within "
            << deadline.count() << " ms" << (context.empty() ? "" : ", running:\n" + context)
            << "\nReplay: RC_PARAMS=\"seed=" << rc::detail::configuration().testParams.seed
            << "\" dist_props --gtest_filter='" << info->test_suite_name() << "." << info->name()
            << "'" << std::endl;
  std::_Exit(3);
}

// Runs fn on every rank of `shape` on backend B and returns the per-rank results, or throws
// RunFailure. If the run has not ended after `deadline`, reports a hang (with `context`, a
// description of what ran) and exits the test process.
template <BackendUnderTest B, class F>
auto run_on(const WorldShape& shape, F&& fn,
            std::chrono::milliseconds deadline = std::chrono::seconds(60),
            const std::string& context = {}) {
  using Results = decltype(B::run(shape, fn));
  struct Shared {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<Results> results;
    std::exception_ptr error;
    bool finished = false;
  };
  auto shared = std::make_shared<Shared>();
  std::thread runner([shared, &shape, &fn] {
    std::optional<Results> results;
    std::exception_ptr error;
    try {
      results.emplace(B::run(shape, fn));
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(shared->mutex);
    shared->results = std::move(results);
    shared->error = error;
    shared->finished = true;
    shared->done.notify_all();
  });
  std::unique_lock lock(shared->mutex);
  if (!shared->done.wait_for(lock, deadline, [&] { return shared->finished; })) {
    report_hang(B::name(), shape, deadline, context);
  }
  lock.unlock();
  runner.join();
  if (shared->error) std::rethrow_exception(shared->error);
  return std::move(*shared->results);
}

}  // namespace props
