// roll_call: one key per member under the collective's key; answers are polled with check(), so a
// store whose host is gone ends the roll call at once instead of at the window, keeping the
// answers already seen. The store's host stays a moment after hearing everyone, so the others
// can read the last answers before its process (and the store) may go.
#include "core/store/roll_call.hpp"

#include <algorithm>
#include <thread>

#include "core/group_text.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {
constexpr auto longest_window = std::chrono::milliseconds(3000);
constexpr auto poll_interval = std::chrono::milliseconds(10);
constexpr auto host_linger = 5 * poll_interval;
std::string answer_key(const std::string& key, int rank) {
  return "roll/" + key + "/" + std::to_string(rank);
}
}  // namespace

Absentees name_absentees(Store* store, const std::string& key, const std::vector<int>& members,
                         int me, std::chrono::milliseconds timeout, int peer) {
  Absentees result{{}, "a peer did not take part"};
  if (peer >= 0) {
    result.ranks = {peer};
    result.phrase = ranks_phrase(result.ranks) + " did not take part";
  } else if (store) {
    const auto window = roll_call_window(timeout);
    const auto roll = roll_call(*store, key, members, me, window);
    result.ranks = roll.absent;
    if (!result.ranks.empty())
      result.phrase = ranks_phrase(result.ranks) + " never arrived (no answer within " +
                      std::to_string(window.count()) + " ms of this rank's timeout" +
                      (roll.complete ? "" : "; the store failed during the roll call") + ")";
  }
  return result;
}

std::chrono::milliseconds roll_call_window(std::chrono::milliseconds timeout) {
  return std::min<std::chrono::milliseconds>(longest_window, timeout);
}

RollCall roll_call(Store& store, const std::string& key, const std::vector<int>& members, int me,
                   std::chrono::milliseconds window) {
  RollCall result;
  std::vector<int> pending;
  for (const int r : members)
    if (r != me) pending.push_back(r);
  const auto deadline = std::chrono::steady_clock::now() + window;
  try {
    store.set(answer_key(key, me), {});
    for (;;) {
      // One member at a time, so a store failing midway keeps the answers already seen.
      for (auto it = pending.begin(); it != pending.end();)
        it = store.check({answer_key(key, *it)}) ? pending.erase(it) : it + 1;
      if (pending.empty() || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(poll_interval);
    }
    if (store.hosted_here()) std::this_thread::sleep_for(host_linger);
  } catch (const dist::Error&) {
    result.complete = false;
  }
  result.absent = std::move(pending);
  return result;
}

}  // namespace dist::core
