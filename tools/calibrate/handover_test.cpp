// dist_calibrate's hand-over measurement: two processes on one core taking turns.
#include "tools/calibrate/handover.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include "dist/errors.hpp"

namespace {

TEST(Handover, TwoProcessesOnOneCoreTakeTurnsInAMeasurableTimeAndTheAffinityIsRestored) {
  cpu_set_t before, after;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  const double us = dist::calibrate::measure_handover_us(60);
  // A switch between processes costs something, and far less than a millisecond on any machine
  // this runs on (0.6 us on CI's 2-core VM).
  EXPECT_GT(us, 0.0);
  EXPECT_LT(us, 1000.0);
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the caller stayed pinned to one core";
}

TEST(Handover, ADeadlineTooShortToFinishIsATimeoutError) {
  EXPECT_THROW(dist::calibrate::measure_handover_us(1e-6), dist::TimeoutError);
  cpu_set_t now;
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_GT(CPU_COUNT(&now), 0);
}

}  // namespace
