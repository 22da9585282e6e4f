// dist::reconfigure on gloo (ranks as threads over one in-memory store): with every member there
// it keeps the world; restarted processes of a new store (torchrun's restart of every process)
// make a new world; after a rank leaves, the survivors agree on a membership without it and go
// on; its replacement (restart count 1) joins no world rendezvous, is refused every call until it
// reconfigures, and is let in at the survivors' next reconfigure, all of them summing again.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/context.hpp"
#include "core/store/hash_store.hpp"
#include "dist/dist.hpp"
#include "dist/fault_tolerance.hpp"
#include "real/testing.hpp"
#include "real/world.hpp"
#include "testing/errors.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using V = std::vector<std::int64_t>;
using test_support::message_of;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(GlooElastic, ReconfigureWithEveryMemberThereKeepsTheWorld) {
  std::vector<std::vector<int>> members(2);
  const auto errors = dist::real::run_thread_world(dist::Backend::gloo, 2, 10s, [&](int rank) {
    EXPECT_EQ(dist::restart_count(), 0);
    const dist::Group group = dist::reconfigure({}, {.timeout = 5s});
    members[static_cast<std::size_t>(rank)] = group.ranks();
    V v{rank + 1};
    dist::all_reduce(v, dist::ReduceOp::sum, group);
    EXPECT_EQ(v[0], 3);
    dist::all_reduce(v);  // nothing changed: the world was not aborted
    EXPECT_EQ(v[0], 6);
  });
  for (const auto& e : errors) EXPECT_FALSE(e) << message_of(e);
  for (const auto& m : members) EXPECT_EQ(m, (std::vector<int>{0, 1}));
}

// A launcher that restarts every process (torchrun) starts a new store: processes with a restart
// count but no earlier process of their rank in the store make a new world as usual.
TEST(GlooElastic, RestartedProcessesOfANewStoreMakeANewWorld) {
  auto store = std::make_shared<dist::core::HashStore>();
  store->set_timeout(10s);
  std::vector<std::exception_ptr> errors(2);
  std::vector<std::int64_t> sums(2, 0);
  {
    std::vector<std::jthread> threads;
    for (int rank = 0; rank < 2; ++rank)
      threads.emplace_back([&, rank] {
        try {
          dist::real::WorldSpec spec{dist::Backend::gloo, store, rank, 2, 10s, ""};
          spec.restart_count = 3;
          auto context = dist::real::make_world_context(spec);
          dist::core::ContextBinding binding(context.get());
          EXPECT_EQ(dist::restart_count(), 3);
          V v{rank + 1};
          dist::all_reduce(v);
          sums[static_cast<std::size_t>(rank)] = v[0];
        } catch (...) {
          errors[static_cast<std::size_t>(rank)] = std::current_exception();
        }
      });
  }
  for (const auto& e : errors) EXPECT_FALSE(e) << message_of(e);
  EXPECT_EQ(sums, (std::vector<std::int64_t>{3, 3}));
}

TEST(GlooElastic, ALostRankIsLeftOutAndItsReplacementJoinsAtTheNextReconfigure) {
  constexpr auto timeout = 10s;
  auto store = std::make_shared<dist::core::HashStore>();
  store->set_timeout(timeout);
  std::atomic<bool> left{false};
  std::atomic<int> shrunk{0};
  std::vector<std::exception_ptr> errors(4);  // ranks 0..2, then rank 2's replacement
  std::vector<std::vector<int>> after_loss(2), after_join(3);
  std::string refused;
  const auto rank_thread = [&](int rank, int restart, auto body) {
    return std::jthread([&, rank, restart, body] {
      try {
        dist::real::WorldSpec spec{dist::Backend::gloo, store, rank, 3, timeout, ""};
        spec.restart_count = restart;
        auto context = dist::real::make_world_context(spec);
        dist::core::ContextBinding binding(context.get());
        body(rank);
      } catch (...) {
        errors[static_cast<std::size_t>(restart ? 3 : rank)] = std::current_exception();
      }
    });
  };
  const auto survivor = [&](int rank) {
    V v{rank + 1};
    dist::all_reduce(v);
    EXPECT_EQ(v[0], 6);
    while (!left) std::this_thread::yield();
    EXPECT_THROW(dist::all_reduce(v), dist::RankFailure);
    dist::Group group = dist::reconfigure({}, {.timeout = 5s});
    after_loss[static_cast<std::size_t>(rank)] = group.ranks();
    V w{rank + 1};
    dist::all_reduce(w, dist::ReduceOp::sum, group);
    EXPECT_EQ(w[0], 1 + 2);
    EXPECT_THROW(dist::barrier(), dist::Aborted);  // the world was replaced
    ++shrunk;
    // Every step reconfigures: one of them lets the replacement in.
    const auto until = Clock::now() + 5s;
    while (group.ranks().size() < 3 && Clock::now() < until)
      group = dist::reconfigure(group, {.timeout = 5s});
    after_join[static_cast<std::size_t>(rank)] = group.ranks();
    V x{rank + 1};
    dist::all_reduce(x, dist::ReduceOp::sum, group);
    EXPECT_EQ(x[0], 1 + 2 + 3);
  };
  {
    std::vector<std::jthread> threads;
    threads.push_back(rank_thread(0, 0, survivor));
    threads.push_back(rank_thread(1, 0, survivor));
    threads.push_back(rank_thread(2, 0, [&](int) {
      V v{3};
      dist::all_reduce(v);
    }));
    threads.back().join();  // its context is gone: the survivors lose it
    left = true;
    while (shrunk < 2 && !errors[0] && !errors[1]) std::this_thread::sleep_for(1ms);
    threads.push_back(rank_thread(2, 1, [&](int rank) {
      EXPECT_EQ(dist::restart_count(), 1);
      EXPECT_EQ(dist::get_rank(), rank);
      V v{3};
      try {
        dist::all_reduce(v);
        ADD_FAILURE() << "a replacement's call went through before it joined";
      } catch (const dist::Aborted& e) {
        refused = e.what();
      }
      const dist::Group group = dist::reconfigure({}, {.timeout = 5s});
      after_join[2] = group.ranks();
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      EXPECT_EQ(v[0], 1 + 2 + 3);
    }));
  }
  for (const auto& e : errors) EXPECT_FALSE(e) << message_of(e);
  for (const auto& m : after_loss) EXPECT_EQ(m, (std::vector<int>{0, 1}));
  for (const auto& m : after_join) EXPECT_EQ(m, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(contains(refused, "restart_count() = 1")) << refused;
  EXPECT_TRUE(contains(refused, "call dist::reconfigure() to join the job")) << refused;
}

}  // namespace
