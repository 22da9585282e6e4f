// dist::reconfigure's store agreement (core/store/membership.hpp): callers that are all the
// members keep the epoch; a lost member is left out once a caller names it or its replacement
// comes; a replacement is let in; one that comes after a round closed waits for the next; a
// member that never comes is named at the deadline, and the next round still works; an old
// process whose replacement came is refused; a corrupt record is named.
#include "core/store/membership.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "core/store/hash_store.hpp"
#include "dist/errors.hpp"

namespace {

using namespace std::chrono_literals;
using dist::core::agree_membership;
using dist::core::Arrival;
using dist::core::Incarnation;
using dist::core::MembershipView;

struct Outcome {
  MembershipView view;
  std::exception_ptr error;
};

// Each arrival calls agree_membership on its own thread; returns what each got.
std::vector<Outcome> agree(dist::core::Store& store, int world,
                           const std::vector<Arrival>& arrivals,
                           std::chrono::milliseconds timeout = 5s) {
  std::vector<Outcome> out(arrivals.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < arrivals.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          out[i].view = agree_membership(store, world, arrivals[i], timeout);
        } catch (...) {
          out[i].error = std::current_exception();
        }
      });
  }
  return out;
}

Arrival member(int rank, std::vector<int> lost = {}, int restart = 0) {
  return {{rank, restart}, std::move(lost)};
}

void expect_agreed(const std::vector<Outcome>& got, std::int64_t epoch,
                   const std::vector<Incarnation>& members) {
  for (const auto& o : got) {
    ASSERT_FALSE(o.error) << "a caller failed";
    EXPECT_EQ(o.view.epoch, epoch);
    EXPECT_EQ(o.view.members, members);
  }
}

TEST(Membership, EveryMemberComingKeepsTheEpoch) {
  dist::core::HashStore store;
  expect_agreed(agree(store, 3, {member(0), member(1), member(2)}), 0, {{0, 0}, {1, 0}, {2, 0}});
  // Again: the next round starts from the same membership.
  expect_agreed(agree(store, 3, {member(2), member(0), member(1)}), 0, {{0, 0}, {1, 0}, {2, 0}});
}

TEST(Membership, ALostMemberIsLeftOutOnceACallerNamesIt) {
  dist::core::HashStore store;
  // Only rank 0 saw rank 2 lost: that is enough.
  expect_agreed(agree(store, 3, {member(0, {2}), member(1)}), 1, {{0, 0}, {1, 0}});
}

TEST(Membership, AReplacementTakesItsRanksPlaceWithoutALossReported) {
  dist::core::HashStore store;
  // Rank 1's replacement coming shows the old process is gone.
  expect_agreed(agree(store, 3, {member(0), member(1, {}, 1), member(2)}), 1,
                {{0, 0}, {1, 1}, {2, 0}});
}

TEST(Membership, AReplacementThatComesLateIsLetInAtTheNextRound) {
  dist::core::HashStore store;
  expect_agreed(agree(store, 3, {member(0, {2}), member(1, {2})}), 1, {{0, 0}, {1, 0}});
  // The replacement waits; the survivors' next round lets it in.
  std::vector<Outcome> late(1);
  std::jthread replacement([&] {
    try {
      late[0].view = agree_membership(store, 3, member(2, {}, 1), 5s);
    } catch (...) {
      late[0].error = std::current_exception();
    }
  });
  std::this_thread::sleep_for(100ms);  // it is alone in its round until the members come
  const auto survivors = agree(store, 3, {member(0), member(1)});
  replacement.join();
  expect_agreed(survivors, 2, {{0, 0}, {1, 0}, {2, 1}});
  expect_agreed(late, 2, {{0, 0}, {1, 0}, {2, 1}});
}

TEST(Membership, AMemberThatNeverComesIsNamedAndTheNextRoundStillWorks) {
  dist::core::HashStore store;
  const auto start = std::chrono::steady_clock::now();
  const auto got = agree(store, 3, {member(0), member(1)}, 300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  for (const auto& o : got) {
    ASSERT_TRUE(o.error);
    try {
      std::rethrow_exception(o.error);
    } catch (const dist::TimeoutError& e) {
      EXPECT_EQ(e.missing_ranks(), std::vector<int>{2}) << e.what();
      EXPECT_NE(std::string(e.what()).find("rank 2 of the membership of epoch 0 (ranks 0-2)"),
                std::string::npos)
          << e.what();
    }
  }
  expect_agreed(agree(store, 3, {member(0), member(1), member(2)}), 0, {{0, 0}, {1, 0}, {2, 0}});
}

TEST(Membership, AnOldProcessWhoseReplacementCameIsRefused) {
  dist::core::HashStore store;
  expect_agreed(agree(store, 2, {member(0), member(1, {}, 1)}), 1, {{0, 0}, {1, 1}});
  // The old rank 1 (restart 0) was slow, not dead: it comes to the next round first.
  std::exception_ptr old_error;
  std::jthread old([&] {
    try {
      (void)agree_membership(store, 2, member(1), 5s);
    } catch (...) {
      old_error = std::current_exception();
    }
  });
  std::this_thread::sleep_for(100ms);
  expect_agreed(agree(store, 2, {member(0), member(1, {}, 1)}), 1, {{0, 0}, {1, 1}});
  old.join();
  ASSERT_TRUE(old_error);
  try {
    std::rethrow_exception(old_error);
  } catch (const dist::Aborted& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 (restart 0) was replaced by a newer process"),
              std::string::npos)
        << e.what();
  }
}

TEST(Membership, ACorruptRecordIsNamed) {
  dist::core::HashStore store;
  store.set("elastic/r0/n", std::string("1"));
  store.set("elastic/r0/a1", std::string("1 zero -"));
  try {
    (void)agree_membership(store, 2, member(0), 1s);
    ADD_FAILURE() << "a corrupt record was read";
  } catch (const dist::BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("'elastic/r0/a1' holds '1 zero -'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
