// batch_isend_irecv and the group rank queries on sim: what sim catches in a batch (a receive no
// rank sends to is a DeadlockError), arguments checked before anything is posted, and the mapping
// between group and global ranks. (The data of batches is checked by the conformance suite.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/tests/sim_test_util.hpp"

namespace {

using dist::P2POp;
using dist::sim::Cluster;
using sim_test::failure_of;
using sim_test::world;
using ::testing::HasSubstr;

TEST(BatchIsendIrecv, AReceiveNoRankSendsToIsADeadlock) {
  auto cluster = world(3);
  cluster.schedule = dist::sim::Schedule::deterministic;
  const auto e = failure_of(cluster, [] {
    const int rank = dist::get_rank();
    std::vector<int> in(2), out(2, rank);
    std::vector<P2POp> ops{P2POp::isend(std::span<const int>(out), (rank + 1) % 3)};
    ops.push_back(P2POp::irecv(std::span<int>(in), (rank + 2) % 3));
    if (rank == 0) ops.push_back(P2POp::irecv(std::span<int>(in), 1, 5));  // nobody sends tag 5
    for (auto& w : dist::batch_isend_irecv(ops)) w.wait();
  });
  EXPECT_TRUE(e.failed_with<dist::DeadlockError>(0)) << e.what();
  EXPECT_THAT(e.outcomes()[0].message, HasSubstr("recv(src=1, tag=5, int32 x 2)"));
}

TEST(BatchIsendIrecv, EveryOperationIsCheckedBeforeAnyIsPosted) {
  const auto e = failure_of(world(2), [] {
    std::vector<float> v(3);
    const int peer = 1 - dist::get_rank();
    dist::batch_isend_irecv(
        {P2POp::isend(std::span<const float>(v), peer), P2POp::irecv(std::span<float>(v), 5)});
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(r)) << e.what();
    EXPECT_THAT(e.outcomes()[static_cast<std::size_t>(r)].message,
                HasSubstr("batch_isend_irecv: ops[1] (irecv): argument 'peer' = 5"));
    // Nothing was posted: no isend is left unmatched or unwaited.
    EXPECT_THAT(e.outcomes()[static_cast<std::size_t>(r)].message,
                ::testing::Not(HasSubstr("never waited")));
  }
}

TEST(BatchIsendIrecv, AnOperationOnAGroupTheRankIsNotInOrAnotherGroupIsRefused) {
  const auto e = failure_of(world(3), [] {
    const auto pair = dist::new_group({0, 1});
    std::vector<float> v(3);
    if (dist::get_rank() == 2) {
      dist::batch_isend_irecv({P2POp::isend(std::span<const float>(v), 0, 0, pair)});
    } else {
      dist::batch_isend_irecv(
          {P2POp::isend(std::span<const float>(v), 2),
           P2POp::isend(std::span<const float>(v), 1 - dist::get_rank(), 0, pair)});
    }
  });
  EXPECT_THAT(e.outcomes()[2].message,
              HasSubstr("batch_isend_irecv: ops[0] (isend): rank 2 is not a member of the group"));
  EXPECT_THAT(e.outcomes()[0].message, HasSubstr("ops[1] (isend) is on another group than ops[0]"));
}

TEST(GroupRanks, MapBetweenGroupAndGlobalRanks) {
  dist::sim::run(world(4), [] {
    const auto g = dist::new_group({3, 1});
    EXPECT_EQ(dist::get_group_rank(g, 1), 1);
    EXPECT_EQ(dist::get_group_rank(g, 3), 0);
    EXPECT_EQ(dist::get_global_rank(g, 0), 3);
    EXPECT_EQ(dist::get_global_rank({}, 2), 2);
    EXPECT_TRUE(dist::is_initialized());
    try {
      dist::get_group_rank(g, 2);
      ADD_FAILURE() << "no error";
    } catch (const dist::InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr("global rank 2 is not a member of the group of world "
                                      "ranks [3, 1]"));
    }
    EXPECT_THROW(dist::get_global_rank(g, 2), dist::InvalidArgument);
  });
  EXPECT_FALSE(dist::is_initialized());
  EXPECT_EQ(dist::get_global_rank({}, 0), 0);
}

}  // namespace
