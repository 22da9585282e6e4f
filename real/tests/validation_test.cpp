// The front end's argument checks hold on every real backend: they run once, above the backend
// interface, before any data moves (here: overlapping buffers on gloo thread ranks).
#include <gtest/gtest.h>

#include <chrono>
#include <span>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "real/registry.hpp"
#include "real/testing.hpp"

namespace {

using namespace std::chrono_literals;

TEST(FrontEndChecks, OverlappingBuffersAreInvalidOnGloo) {
  const auto& gloo = dist::real::backend_entry(dist::Backend::gloo, "test");
  if (const std::string why = gloo.unavailable(2); !why.empty()) GTEST_SKIP() << why;
  const auto errors = dist::real::run_thread_world(dist::Backend::gloo, 2, 30s, [](int) {
    std::vector<int> buffer(6);
    const std::span<int> b(buffer);
    dist::all_to_all(b.subspan(0, 4), b.subspan(2, 4));  // every rank: output overlaps input
  });
  for (std::size_t r = 0; r < errors.size(); ++r) {
    ASSERT_TRUE(errors[r]) << "rank " << r << " accepted overlapping buffers";
    try {
      std::rethrow_exception(errors[r]);
    } catch (const dist::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("all_to_all: argument 'input'"), std::string::npos)
          << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << r << ": not InvalidArgument: " << e.what();
    }
  }
}

}  // namespace
