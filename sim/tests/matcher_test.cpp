// The matcher's verdicts on arrivals, driven one arrival at a time (concurrent ranks hit the
// orderings below only by chance): a differing call fails the op at once, under its guard, so a
// later arrival that agrees with the first one joins the failure instead of running the calls.
// Before, the op turned failing only after the differing rank left the gate, and a last arrival
// in between ran an all_reduce over a uint8 buffer as float32 and lost the DesyncError.
#include <gtest/gtest.h>

#include "dist/sim/run.hpp"
#include "sim/world.hpp"

namespace dist::sim {

// World's friend in this test: its matching step without a rank thread around it.
struct MatcherProbe {
  using Kind = World::Arrival::Kind;
  static Kind arrive(World& world, Op& op, std::size_t index, Call call) {
    return world.register_arrival(op, index, std::move(call)).kind;
  }
};

namespace {

using Kind = MatcherProbe::Kind;

Call all_reduce_of(DType dtype) {
  Call c;
  static_cast<core::CallDesc&>(c) = core::make_call(OpKind::all_reduce, dtype, 4);
  return c;
}

// A gathering op of `world`'s world communicator.
struct GatheringOp {
  explicit GatheringOp(World& world) {
    op.comm = world.world_comm();
    op.participants = op.comm->members;
    op.calls.resize(op.participants.size());
    op.arrived.reset(op.participants.size());
  }
  Op op;
};

Cluster three_ranks() { return Cluster{.nodes = 1, .ranks_per_node = 3}; }

TEST(Matcher, ADifferingArrivalFailsTheOpBeforeTheLastOneArrives) {
  World world(three_ranks());
  GatheringOp g(world);
  EXPECT_EQ(MatcherProbe::arrive(world, g.op, 0, all_reduce_of(DType::float32)), Kind::waiting);
  EXPECT_EQ(MatcherProbe::arrive(world, g.op, 1, all_reduce_of(DType::uint8)), Kind::fail);
  EXPECT_EQ(g.op.state.load(), Op::State::failing);
  // The last arrival agrees with the first: it joins the failure, and nothing runs.
  EXPECT_EQ(MatcherProbe::arrive(world, g.op, 2, all_reduce_of(DType::float32)),
            Kind::joined_failed);
}

TEST(Matcher, AgreeingArrivalsGatherUntilTheLast) {
  World world(three_ranks());
  GatheringOp g(world);
  EXPECT_EQ(MatcherProbe::arrive(world, g.op, 2, all_reduce_of(DType::int32)), Kind::waiting);
  EXPECT_EQ(MatcherProbe::arrive(world, g.op, 0, all_reduce_of(DType::int32)), Kind::waiting);
  EXPECT_EQ(MatcherProbe::arrive(world, g.op, 1, all_reduce_of(DType::int32)), Kind::all_arrived);
  EXPECT_EQ(g.op.state.load(), Op::State::gathering);
}

}  // namespace
}  // namespace dist::sim
