// The cross-check: where two ranks' published calls first differ (find_divergence), and, over a
// scripted backend whose mismatched calls complete, the DesyncError every rank then raises at its
// next call.
#include "core/calls/cross_check.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "core/calls/call_layer.hpp"
#include "core/calls/call_log.hpp"
#include "core/calls/tests/scripted_world.hpp"
#include "core/store/hash_store.hpp"
#include "dist/errors.hpp"
#include "dist/store.hpp"

namespace {

using namespace dist;
using namespace dist::core;
using namespace std::chrono_literals;

// A group's calls #1..n as a rank records them: each with the chain up to it.
std::vector<CallRecord> calls_of(const std::vector<CallDesc>& calls,
                                 const std::string& group = "world") {
  std::vector<CallRecord> out;
  std::uint64_t chain = 0;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    chain = chain_hash(chain, calls[i]);
    out.push_back({calls[i], i + 1, group, CallState::completed, 0, 0, chain, group});
  }
  return out;
}

const CallDesc sum = make_call(CallKind::all_reduce, DType::float32, 4);
const CallDesc max = make_call(CallKind::all_reduce, DType::float32, 4, -1, ReduceOp::max);
const CallDesc barrier = make_call(CallKind::barrier);

TEST(CrossCheck, AgreeingCallsAreNoDivergence) {
  EXPECT_EQ(find_divergence(calls_of({sum, barrier}), 0, calls_of({sum, barrier}), 1), "");
  // Only what both hold is compared: a peer one call behind agrees.
  EXPECT_EQ(find_divergence(calls_of({sum, barrier}), 0, calls_of({sum}), 1), "");
}

TEST(CrossCheck, NamesTheFirstCallThatDiffers) {
  EXPECT_EQ(find_divergence(calls_of({sum, max, barrier}), 2, calls_of({sum, sum, barrier}), 1),
            "collective on world #2: ranks disagree on 'op':\n"
            "  rank 1 called all_reduce(op=sum, float32 x 4)\n"
            "  rank 2 called all_reduce(op=max, float32 x 4)\n"
            "  (found by comparing the ranks' published calls: the calls completed, with wrong "
            "results)");
}

TEST(CrossCheck, ADifferenceOlderThanTheRecordsIsStillFound) {
  auto mine = calls_of({max, barrier, barrier}), theirs = calls_of({sum, barrier, barrier});
  mine.erase(mine.begin());  // #1 is no longer held: only the chains tell
  theirs.erase(theirs.begin());
  EXPECT_EQ(find_divergence(mine, 0, theirs, 1),
            "collective on world: ranks 0 and 1 made different calls at or before #2, earlier "
            "than the calls compared (rank 0's #2 is barrier(), rank 1's barrier())");
}

TEST(CrossCheck, GroupsAreComparedApart) {
  const auto mine = calls_of({sum}, "group {0, 1}"), theirs = calls_of({max}, "world");
  EXPECT_EQ(find_divergence(mine, 0, theirs, 1), "");
}

TEST(CrossCheck, APeerThatPublishesLateIsComparedThoughThisRankMadeNoCallSince) {
  // Rank 0 is stuck in call #1 (its records no longer change); rank 1's status appears only
  // after rank 0's first rounds found none.
  const auto store = std::make_shared<HashStore>();
  CallLog log(store, 2, 0, 2s, 64);
  const std::uint32_t world = log.recorder.add_group("world", "world");
  log.add_members("world", {0, 1});
  log.recorder.post(world, 1, sum, calls_of({sum}).back().chain);
  std::this_thread::sleep_for(3 * publish_interval);
  store->set(status_key(1), encode_records(calls_of({max})));
  for (int round = 0; round < 50 && !log.desync_found(); ++round)
    std::this_thread::sleep_for(publish_interval / 2);
  ASSERT_TRUE(log.desync_found());
  EXPECT_EQ(log.desync_text().rfind("collective on world #1: ranks disagree on 'op':\n", 0), 0u)
      << log.desync_text();
}

TEST(CrossCheck, EveryRankRaisesTheDivergenceAtItsNextCall) {
  // The scripted backend succeeds whatever the op: the mismatched calls complete.
  constexpr int n = 3;
  auto ranks = calls_test::world(n, std::make_shared<HashStore>(), 2s);
  std::vector<std::string> errors(n);
  calls_test::on_threads(n, [&](int r) {
    std::vector<float> v(4);
    const Buf data{v.data(), v.size(), DType::float32, Device::cpu()};
    auto& layer = *ranks[static_cast<std::size_t>(r)].layer;
    layer.all_reduce(data, r == 1 ? ReduceOp::max : ReduceOp::sum).wait();  // completes
    // A training loop goes on: within a second each rank's next call raises.
    for (int step = 0; step < 50 && errors[static_cast<std::size_t>(r)].empty(); ++step) {
      std::this_thread::sleep_for(50ms);
      try {
        layer.barrier().wait();
      } catch (const DesyncError& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    }
  });
  for (int r = 0; r < n; ++r) {
    const std::string& e = errors[static_cast<std::size_t>(r)];
    EXPECT_EQ(e.rfind("collective on world #1: ranks disagree on 'op':\n", 0), 0u)
        << "rank " << r << ": " << e;
    EXPECT_NE(e.find("called all_reduce(op=max, float32 x 4)"), std::string::npos) << e;
    EXPECT_EQ(e, errors[0]);  // the first finder's words, on every rank
  }
}

}  // namespace

namespace {

// Rank 0 hosts the store and learned of a divergence; rank 1 ran ahead and learns of it later.
// Rank 0's DesyncError waits for that (its process, and with it the store, may end right after).
TEST(CrossCheck, TheStoresHostKeepsItUpUntilEveryRankLearnedOfTheDivergence) {
  const auto host = std::make_shared<dist::TCPStore>("127.0.0.1", 0, -1, true, 10s);
  const auto client = std::make_shared<dist::TCPStore>("127.0.0.1", host->port(), -1, false, 10s);
  CallLog log0(host, 2, 0, 2s, 0), log1(client, 2, 1, 2s, 0);  // no publisher threads
  host->set("calls/desync", to_bytes(std::string("collective on world #1: ranks disagree")));
  ASSERT_TRUE(log0.desync_published());
  std::jthread late([&] {
    std::this_thread::sleep_for(300ms);
    EXPECT_TRUE(log1.desync_published());
  });
  try {
    log0.throw_desync();
    ADD_FAILURE() << "no DesyncError";
  } catch (const DesyncError& e) {
    EXPECT_EQ(std::string(e.what()), "collective on world #1: ranks disagree");
    EXPECT_EQ(host->add("calls/desync/learned", 0), 2) << "it threw before rank 1 learned";
  }
  // A second throw does not wait again (and a rank that never learns is waited for at most
  // CallLog::desync_linger).
  EXPECT_THROW(log0.throw_desync(), DesyncError);
}

}  // namespace
