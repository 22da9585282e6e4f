// The roll call after a failed collective: members that answer within the window are present,
// the others are named absent; it ends as soon as everyone has answered; keys of different
// collectives do not mix; a failing store ends it at once with a partial answer.
#include "core/store/roll_call.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "core/store/hash_store.hpp"
#include "dist/errors.hpp"

namespace {

using namespace std::chrono_literals;
using dist::core::roll_call;
using dist::core::RollCall;
using Clock = std::chrono::steady_clock;

// Runs the roll call `key` on the members `answering` (threads), over `members`.
std::vector<RollCall> answer(dist::core::Store& store, const std::string& key,
                             const std::vector<int>& members, const std::vector<int>& answering,
                             std::chrono::milliseconds window) {
  std::vector<RollCall> out(answering.size());
  std::vector<std::jthread> threads;
  for (std::size_t i = 0; i < answering.size(); ++i)
    threads.emplace_back([&, i] { out[i] = roll_call(store, key, members, answering[i], window); });
  threads.clear();
  return out;
}

TEST(RollCall, MembersThatDoNotAnswerAreAbsent) {
  dist::core::HashStore store;
  const auto start = Clock::now();
  const auto calls = answer(store, "g/all_reduce #4", {0, 1, 2, 3}, {0, 2}, 300ms);
  EXPECT_GE(Clock::now() - start, 300ms);  // it waited the window for 1 and 3
  for (const auto& c : calls) {
    EXPECT_EQ(c.absent, (std::vector<int>{1, 3}));
    EXPECT_TRUE(c.complete);
  }
}

TEST(RollCall, EndsAsSoonAsEveryMemberHasAnswered) {
  dist::core::HashStore store;
  const auto start = Clock::now();
  const auto calls = answer(store, "g/barrier #1", {4, 5, 6}, {4, 5, 6}, 20s);
  EXPECT_LT(Clock::now() - start, 5s);
  for (const auto& c : calls) EXPECT_TRUE(c.absent.empty());
}

TEST(RollCall, ALateMemberWithinTheWindowIsPresent) {
  dist::core::HashStore store;
  RollCall early;
  std::jthread first([&] { early = roll_call(store, "g/x #2", {0, 1}, 0, 5s); });
  std::this_thread::sleep_for(200ms);
  const RollCall late = roll_call(store, "g/x #2", {0, 1}, 1, 5s);
  first.join();
  EXPECT_TRUE(early.absent.empty());
  EXPECT_TRUE(late.absent.empty());
}

TEST(RollCall, DifferentCollectivesDoNotCountEachOthersAnswers) {
  dist::core::HashStore store;
  (void)roll_call(store, "g/all_reduce #1", {0, 1}, 1, 0ms);  // rank 1 answered #1 only
  const RollCall c = roll_call(store, "g/all_reduce #2", {0, 1}, 0, 100ms);
  EXPECT_EQ(c.absent, std::vector<int>{1});
}

// A store whose every call fails, as a TcpStore does once its host is gone.
class GoneStore final : public dist::core::Store {
 protected:
  void do_set(const std::string&, const dist::core::Bytes&) override { fail(); }
  dist::core::Bytes do_get(const std::string&, std::chrono::milliseconds) override { fail(); }
  void do_wait(const std::vector<std::string>&, std::chrono::milliseconds) override { fail(); }
  std::int64_t do_add(const std::string&, std::int64_t) override { fail(); }
  bool do_check(const std::vector<std::string>&) override { fail(); }
  dist::core::Bytes do_compare_set(const std::string&, const dist::core::Bytes&,
                                   const dist::core::Bytes&) override {
    fail();
  }
  bool do_delete_key(const std::string&) override { fail(); }
  std::int64_t do_num_keys() override { fail(); }

 private:
  [[noreturn]] static void fail() { throw dist::BackendError("store: connection refused"); }
};

// A store that fails from its `fail_from`-th poll (missing) on, as a TcpStore does when its host
// goes during a roll call; until then it is an in-memory store.
class FailingLaterStore final : public dist::core::Store {
 public:
  explicit FailingLaterStore(int fail_from) : fail_from_(fail_from) {}

 protected:
  void do_set(const std::string& k, const dist::core::Bytes& v) override { inner_.set(k, v); }
  dist::core::Bytes do_get(const std::string& k, std::chrono::milliseconds t) override {
    return inner_.get(k, t);
  }
  void do_wait(const std::vector<std::string>& k, std::chrono::milliseconds t) override {
    inner_.wait(k, t);
  }
  std::int64_t do_add(const std::string& k, std::int64_t d) override { return inner_.add(k, d); }
  bool do_check(const std::vector<std::string>& k) override { return inner_.check(k); }
  dist::core::Bytes do_compare_set(const std::string& k, const dist::core::Bytes& e,
                                   const dist::core::Bytes& d) override {
    return inner_.compare_set(k, e, d);
  }
  bool do_delete_key(const std::string& k) override { return inner_.delete_key(k); }
  std::int64_t do_num_keys() override { return inner_.num_keys(); }
  std::vector<std::string> do_missing(const std::vector<std::string>& k,
                                      std::chrono::milliseconds t) override {
    if (++polls_ >= fail_from_) throw dist::BackendError("store: connection reset");
    return inner_.missing(k, t);
  }

 private:
  dist::core::HashStore inner_;
  int fail_from_;
  int polls_ = 0;
};

TEST(RollCall, AnswersSeenBeforeTheStoreFailsAreKept) {
  FailingLaterStore store(2);  // the first poll hears members 1 and 2, the second fails
  (void)roll_call(store, "g/all_gather #5", {1}, 1, 0ms);
  (void)roll_call(store, "g/all_gather #5", {2}, 2, 0ms);
  const RollCall c = roll_call(store, "g/all_gather #5", {0, 1, 2, 3}, 0, 10s);
  EXPECT_FALSE(c.complete);
  EXPECT_EQ(c.absent, std::vector<int>{3});
}

TEST(RollCall, AFailingStoreEndsItAtOnceWithAPartialAnswer) {
  GoneStore store;
  const auto start = Clock::now();
  const RollCall c = roll_call(store, "g/all_reduce #3", {0, 1, 2}, 0, 10s);
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_FALSE(c.complete);
  EXPECT_EQ(c.absent, (std::vector<int>{1, 2}));  // nobody could be heard
}

}  // namespace
