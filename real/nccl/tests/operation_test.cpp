// The nccl backend's bookkeeping that needs no GPU: collectives numbered by a counter send/recv
// never advance, roll-call keys every member shares (no per-rank suffix), whom a p2p call blames,
// the overlap test behind in-place all_to_all, and the bound on waiting for ncclCommAbort.
#include "real/nccl/operation.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "real/nccl/backend.hpp"

namespace {

using dist::real::Operation;
using dist::real::OperationCounter;
using dist::real::roll_call_key;

TEST(NcclOperations, SendAndRecvDoNotAdvanceTheCollectiveNumber) {
  // Rank 0 sends twice between its collectives, rank 1 receives once: collective #2 is #2 on both.
  OperationCounter rank0, rank1;
  EXPECT_EQ(rank0.collective("all_reduce").name, "all_reduce #1");
  EXPECT_EQ(rank1.collective("all_reduce").name, "all_reduce #1");
  const Operation send1 = rank0.p2p("send", 1, 5);
  const Operation send2 = rank0.p2p("send", 1, 5);
  const Operation recv = rank1.p2p("recv", 0, 4);
  EXPECT_EQ(send1.name, "send #1 to group rank 1");
  EXPECT_EQ(send2.name, "send #2 to group rank 1");
  EXPECT_EQ(recv.name, "recv #1 from group rank 0");
  const Operation b0 = rank0.collective("barrier");
  const Operation b1 = rank1.collective("barrier");
  EXPECT_EQ(b0.name, "barrier #2");
  EXPECT_EQ(b0.name, b1.name);
  EXPECT_EQ(b0.collective, 2u);
  EXPECT_EQ(b1.collective, 2u);
}

TEST(NcclOperations, RollCallKeysAreTheSameOnEveryMemberWhateverTheNameSays) {
  OperationCounter rank0, rank1;
  (void)rank0.p2p("send", 1, 1);  // p2p on one rank only: the numbers must still agree
  const Operation a = rank0.collective("all_gather");
  const Operation b = rank1.collective("all_gather");
  // Each rank adds its own detail to the name (staging, DIST_DEBUG's check): not to the key.
  const Operation staging = a.with(" (waiting for earlier operations before staging host data)");
  const Operation checking = b.with(" (comparing the ranks' calls, DIST_DEBUG=detail)");
  EXPECT_EQ(roll_call_key("nccl/world", staging), "nccl/world/collective 1");
  EXPECT_EQ(roll_call_key("nccl/world", staging), roll_call_key("nccl/world", checking));
  EXPECT_EQ(staging.collective, a.collective);
  // A different kind at the same number answers the same roll call: it arrived (and disagrees).
  OperationCounter rank2;
  EXPECT_EQ(roll_call_key("nccl/world", rank2.collective("broadcast")),
            roll_call_key("nccl/world", a));
  // Groups keep apart.
  EXPECT_NE(roll_call_key("nccl/world/new_group #1", a), roll_call_key("nccl/world", a));
}

TEST(NcclOperations, P2pCallsBlameTheirPeerAndHaveNoRollCall) {
  OperationCounter counter;
  const Operation send = counter.p2p("send", 1, 7);
  EXPECT_EQ(send.peer, 7);  // the world rank: what TimeoutError and RankFailure name
  EXPECT_EQ(send.collective, 0u);
  EXPECT_EQ(roll_call_key("nccl/world", send), "");
  EXPECT_EQ(send.with(" (staging)").peer, 7);
  EXPECT_EQ(roll_call_key("nccl/world", Operation{"init", 0, -1}), "");  // setup: no roll call
}

TEST(NcclOperations, OverlapsFindsSharedBytesOnly) {
  char buffer[64] = {};
  EXPECT_TRUE(dist::real::overlaps(buffer, buffer, 8));
  EXPECT_TRUE(dist::real::overlaps(buffer, buffer + 7, 8));
  EXPECT_TRUE(dist::real::overlaps(buffer + 7, buffer, 8));
  EXPECT_FALSE(dist::real::overlaps(buffer, buffer + 8, 8));
  EXPECT_FALSE(dist::real::overlaps(buffer + 8, buffer, 8));
  EXPECT_FALSE(dist::real::overlaps(buffer, buffer, 0));
}

TEST(NcclOperations, AbortIsWaitedForAtMostTenSecondsOrTheTimeout) {
  using std::chrono::milliseconds;
  EXPECT_EQ(dist::real::abort_wait(milliseconds(500)), milliseconds(500));
  EXPECT_EQ(dist::real::abort_wait(std::chrono::minutes(30)), milliseconds(10000));
}

}  // namespace
