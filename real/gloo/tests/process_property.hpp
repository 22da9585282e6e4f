// What the property tests over gloo processes share: a few cases a run (each connects real
// worlds; RC_PARAMS=max_success=N runs more), checked inside the current gtest, and the text a
// process reports its membership in.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace gloo_process_property {

// Checks `testable` (a rapidcheck property body) with 3 cases unless RC_PARAMS says otherwise.
template <class Testable>
void check_few(Testable&& testable) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  auto params = rc::detail::configuration().testParams;
  if (const char* given = std::getenv("RC_PARAMS");
      !given || std::string(given).find("max_success") == std::string::npos)
    params.maxSuccess = 3;
  const auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  std::ostringstream report;
  rc::detail::printResultMessage(result, report);
  EXPECT_TRUE(result.template is<rc::detail::SuccessResult>()) << report.str();
}

// "0,1,3"
inline std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (const int r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

}  // namespace gloo_process_property
