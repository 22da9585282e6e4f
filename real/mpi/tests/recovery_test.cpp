// The recovery calls on mpi: Open MPI 4.1 has no ULFM, so dist::abort, shrink_group and
// reconfigure refuse, saying why, and leave the group as it was (it still works afterwards).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dist/dist.hpp"

namespace {

void expect_refused(void (*call)(), const char* name) {
  try {
    call();
    ADD_FAILURE() << name << " was accepted on mpi";
  } catch (const dist::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("Open MPI 4.1 has no ULFM"), std::string::npos)
        << name << ": " << e.what();
  }
}

TEST(MpiRecovery, AbortShrinkAndReconfigureAreRefusedAndTheGroupGoesOn) {
  EXPECT_EQ(dist::restart_count(), 0);
  expect_refused([] { (void)dist::reconfigure(); }, "dist::reconfigure");
  expect_refused([] { dist::abort(); }, "dist::abort");
  expect_refused([] { (void)dist::shrink_group({}, std::vector<int>{}); }, "shrink_group");
  expect_refused([] { (void)dist::shrink_group({}, std::vector<int>{}, {.abort_parent = true}); },
                 "shrink_group with abort_parent");
  std::vector<int> v{1};
  dist::all_reduce(v);  // nothing was aborted
  EXPECT_EQ(v[0], dist::get_world_size());
}

}  // namespace
