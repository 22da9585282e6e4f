// The call layer over a scripted backend, ranks as threads sharing a HashStore: numbering from 1,
// the recorder, and the diagnosis a timeout or a lost peer gets (DesyncError with every rank's
// call, or where an absent rank is), from the call itself and from a pending Work's wait().
#include "core/calls/call_layer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/calls/tests/scripted_world.hpp"
#include "core/store/hash_store.hpp"
#include "core/work_state.hpp"
#include "dist/errors.hpp"
#include "testing/errors.hpp"
#include "testing/processes.hpp"

namespace {

using namespace dist;
using namespace dist::core;
using namespace std::chrono_literals;

using namespace calls_test;
using test_support::message_of;

Buf floats(std::vector<float>& v) { return {v.data(), v.size(), DType::float32, Device::cpu()}; }

TEST(CallLayer, ATimeoutOfCallsThatDifferIsADesyncErrorOnEveryRank) {
  auto store = std::make_shared<HashStore>();
  auto ranks = world(3, store, 300ms);
  for (auto& r : ranks) r.backend->failure = timeout_error;
  ranks[2].backend->pending = true;  // its error comes from wait()
  const auto errors = on_threads(3, [&](int rank) {
    std::vector<float> v(4);
    auto& layer = *ranks[static_cast<std::size_t>(rank)].layer;
    layer.all_reduce(floats(v), rank == 1 ? ReduceOp::max : ReduceOp::sum).wait();
  });
  for (const auto& e : errors) {
    ASSERT_TRUE(e);
    EXPECT_THROW(std::rethrow_exception(e), DesyncError);
    EXPECT_EQ(message_of(e),
              "collective on world #1: ranks disagree on 'op':\n"
              "  rank 0 called all_reduce(op=sum, float32 x 4)\n"
              "  rank 1 called all_reduce(op=max, float32 x 4)\n"
              "  rank 2 called all_reduce(op=sum, float32 x 4)");
  }
}

// DIST_FLIGHT_RECORDER=path: the diagnosis of a failed call writes every rank's calls as one
// Chrome trace, one track per rank, the absent rank's from what it published.
TEST(CallLayer, AFailureWritesEveryRanksRecorderAsATrace) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("dist_recorder_" + std::to_string(::getpid()) + ".json");
  test_support::ScopedEnv env("DIST_FLIGHT_RECORDER", path.string());
  auto store = std::make_shared<HashStore>();
  auto ranks = world(3, store, 300ms);
  on_threads(3, [&](int rank) {
    auto& me = ranks[static_cast<std::size_t>(rank)];
    me.layer->barrier().wait();  // #1
    if (rank == 2) return;       // absent from #2
    me.backend->failure = timeout_error;
    me.layer->barrier().wait();
  });
  std::ifstream file(path);
  ASSERT_TRUE(file) << path;
  const auto trace = nlohmann::json::parse(file);
  std::filesystem::remove(path);
  std::set<int> tracks;
  int failed = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    tracks.insert(e["tid"].get<int>());
    if (e["args"]["state"] == "failed") ++failed;
  }
  EXPECT_EQ(tracks, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(failed, 2);  // ranks 0 and 1's barrier #2
}

TEST(CallLayer, ATimeoutNamesTheRankThatStoppedCallingAndWhere) {
  auto store = std::make_shared<HashStore>();
  auto ranks = world(3, store, 400ms);
  const auto errors = on_threads(3, [&](int rank) {
    auto& me = ranks[static_cast<std::size_t>(rank)];
    me.layer->barrier().wait();  // #1, on every rank
    if (rank == 2) return;       // then stops calling (its layer lives on)
    me.backend->failure = timeout_error;
    me.layer->barrier().wait();  // #2
  });
  EXPECT_FALSE(errors[2]);
  for (const int r : {0, 1}) {
    ASSERT_TRUE(errors[static_cast<std::size_t>(r)]);
    try {
      std::rethrow_exception(errors[static_cast<std::size_t>(r)]);
    } catch (const TimeoutError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.missing_ranks(), std::vector<int>{2}) << what;
      EXPECT_EQ(what.rfind("barrier() on world #2 timed out after 400 ms: rank 2 completed call #1 "
                           "(barrier()) ",
                           0),
                0u)
          << what;
      EXPECT_NE(what.find(" ago and has not called since; ranks 0, 1 wait in call #2 (barrier())\n"
                          "  (scripted backend timed out)"),
                std::string::npos)
          << what;
    }
  }
}

TEST(CallLayer, ALostPeerWhoseLastCallCouldNotMatchIsADesync) {
  auto store = std::make_shared<HashStore>();
  auto ranks = world(3, store, 400ms);
  on_threads(3, [&](int rank) {  // rank 2 broadcasts from 0 and leaves
    if (rank != 2) return;
    std::vector<float> v(4);
    ranks[2].layer->broadcast(floats(v), 0).wait();
  });
  ranks[2].layer.reset();  // its last calls are published as it goes
  const auto errors = on_threads(2, [&](int rank) {
    auto& me = ranks[static_cast<std::size_t>(rank)];
    me.backend->failure = [] { return std::make_exception_ptr(RankFailure("lost rank 2", 2)); };
    std::vector<float> v(4);
    me.layer->broadcast(floats(v), rank).wait();  // ranks 0 and 1 disagree on the root
  });
  for (const auto& e : errors) {
    ASSERT_TRUE(e);
    EXPECT_THROW(std::rethrow_exception(e), DesyncError);
    EXPECT_EQ(message_of(e),
              "collective on world #1: ranks disagree on 'src':\n"
              "  rank 0 called broadcast(src=0, float32 x 4)\n"
              "  rank 1 called broadcast(src=1, float32 x 4)\n"
              "  rank 2 called broadcast(src=0, float32 x 4)");
  }
}

TEST(CallLayer, ALostPeerThatCalledTheSameIsARankFailureAtTheCall) {
  auto store = std::make_shared<HashStore>();
  auto ranks = world(2, store, 300ms);
  ranks[1].layer.reset();
  ranks[0].backend->failure = [] { return std::make_exception_ptr(RankFailure("lost rank 1", 1)); };
  try {
    ranks[0].layer->barrier().wait();
    ADD_FAILURE() << "no error";
  } catch (const RankFailure& e) {
    EXPECT_EQ(e.failed_rank(), 1);
    EXPECT_EQ(std::string(e.what()), "barrier() on world #1: lost rank 1");
  }
}

TEST(CallLayer, P2PErrorsPassAsTheyAreAndRestartNumberingCountsFromOne) {
  auto store = std::make_shared<HashStore>();
  auto ranks = world(1, store, 300ms);
  auto& layer = *ranks[0].layer;
  layer.barrier().wait();
  layer.barrier().wait();
  restart_numbering(layer);
  ranks[0].backend->failure = [] {
    return std::make_exception_ptr(TimeoutError("recv from rank 0 timed out", {0}));
  };
  std::vector<float> v(1);
  EXPECT_THROW(
      {
        try {
          layer.recv(floats(v), 0, 5).wait();
        } catch (const TimeoutError& e) {
          EXPECT_EQ(std::string(e.what()), "recv from rank 0 timed out");
          throw;
        }
      },
      TimeoutError);
  ranks[0].backend->failure = [] {
    return std::make_exception_ptr(BackendError("engine broke", 7));
  };
  try {
    layer.barrier().wait();
  } catch (const BackendError& e) {
    EXPECT_EQ(std::string(e.what()), "barrier() on world #1: engine broke");
    EXPECT_EQ(e.vendor_code(), 7);
  }
  EXPECT_EQ(&without_call_layer(layer), ranks[0].backend.get());
}

// A monitored barrier's keys live until the group's next one has passed: however many a group
// runs, the store holds one barrier's keys (a rank per key), not one per barrier.
TEST(CallLayer, MonitoredBarriersLeaveOneBarriersKeysInTheStore) {
  auto store = std::make_shared<HashStore>();
  auto ranks = world(3, store, 5s);
  const auto run = [&](int barriers) {
    const auto errors = on_threads(3, [&](int rank) {
      for (int i = 0; i < barriers; ++i)
        ranks[static_cast<std::size_t>(rank)].layer->monitored_barrier(5s, false);
    });
    for (const auto& e : errors) ASSERT_FALSE(e) << message_of(e);
  };
  run(1);
  const auto after_one = store->num_keys();
  EXPECT_TRUE(store->check({"monitored_barrier/w/1/0", "monitored_barrier/w/1/2"}));
  run(5);
  EXPECT_EQ(store->num_keys(), after_one);
  EXPECT_FALSE(store->check({"monitored_barrier/w/5/1"}));
  EXPECT_TRUE(store->check(
      {"monitored_barrier/w/6/0", "monitored_barrier/w/6/1", "monitored_barrier/w/6/2"}));
}

// A rank that reaches a monitored barrier after the others gave up on it learns at once that it
// failed (the verdict in the store), instead of finding their keys and passing it alone.
TEST(CallLayer, ARankLateForAMonitoredBarrierLearnsAtOnceThatItFailed) {
  auto store = std::make_shared<HashStore>();
  auto ranks = world(3, store, 5s);
  std::vector<std::chrono::steady_clock::duration> took(3);
  const auto errors = on_threads(3, [&](int rank) {
    if (rank == 2) std::this_thread::sleep_for(700ms);
    const auto start = std::chrono::steady_clock::now();
    try {
      ranks[static_cast<std::size_t>(rank)].layer->monitored_barrier(300ms, true);
    } catch (...) {
      took[static_cast<std::size_t>(rank)] = std::chrono::steady_clock::now() - start;
      throw;
    }
  });
  for (int r = 0; r < 3; ++r) {
    const auto& e = errors[static_cast<std::size_t>(r)];
    ASSERT_TRUE(e) << "rank " << r << " passed a barrier rank 2 missed";
    try {
      std::rethrow_exception(e);
    } catch (const TimeoutError& t) {
      EXPECT_EQ(t.missing_ranks(), std::vector<int>{2}) << t.what();
      if (r == 2) {
        EXPECT_NE(std::string(t.what()).find("failed before rank 2 arrived: the others gave up "
                                             "waiting for rank 2"),
                  std::string::npos)
            << t.what();
      }
    }
  }
  EXPECT_LT(took[2], 200ms) << "the late rank waited for a barrier that had already failed";
}

}  // namespace
