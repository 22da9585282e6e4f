// dist_calibrate's measurement of the node's copy rate.
#include "tools/calibrate/copy_rate.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "dist/errors.hpp"

namespace {

TEST(CopyRate, ThreadsCopyingAtOnceMoveAMeasurableRate) {
  const double gbps = dist::calibrate::measure_node_copy_gbps(2);
  // Any machine this runs on copies faster than 100 MB/s and slower than 10 TB/s (13.6 GB/s on
  // CI's 2-core VM).
  EXPECT_TRUE(std::isfinite(gbps));
  EXPECT_GT(gbps, 0.1);
  EXPECT_LT(gbps, 10'000.0);
}

TEST(CopyRate, NoThreadIsAnInvalidArgument) {
  EXPECT_THROW(dist::calibrate::measure_node_copy_gbps(0), dist::InvalidArgument);
}

}  // namespace
