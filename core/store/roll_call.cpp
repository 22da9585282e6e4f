// roll_call: one key per member under the collective's key; answers are polled with missing() (a
// bounded number of requests per poll), so a store whose host is gone ends the roll call at once,
// keeping the answers already seen, and a frozen host is named after one window (stopped, exited or
// cut off, by what a fresh connection to it finds). The store's host
// stays a moment after hearing everyone, so the others can read the last answers before its process
// (and the store) may go.
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
// What one poll may take at least: a million members' keys take a loaded machine a second or two.
constexpr auto least_query_budget = std::chrono::milliseconds(3000);
// How long a fresh connection to a silent store's host is given to say whether it is alive.
constexpr auto reach_budget = std::chrono::milliseconds(500);
}  // namespace

std::string roll_call_answer_key(const std::string& key, int rank) {
  return "roll/" + key + "/" + std::to_string(rank);
}

std::chrono::milliseconds roll_call_window(std::chrono::milliseconds timeout) {
  return std::min<std::chrono::milliseconds>(longest_window, timeout);
}

namespace {
// The world ranks of the answer keys in `keys` (each ends in "/<rank>").
std::vector<int> ranks_of(const std::vector<std::string>& keys) {
  std::vector<int> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(std::stoi(k.substr(k.rfind('/') + 1)));
  return out;
}

// The roll call's answer when the store's host (another process) did not answer at all.
RollCall host_unresponsive(const Store& store, const std::vector<int>& members,
                           std::vector<std::string> pending) {
  RollCall result;
  result.complete = false;
  const int host = store.host_rank();
  if (host >= 0 && !store.hosted_here() &&
      std::find(members.begin(), members.end(), host) != members.end()) {
    result.host_unresponsive = true;
    result.host_reach = store.reach_host(reach_budget);
    result.absent = {host};
  } else {
    result.absent = ranks_of(pending);
  }
  return result;
}
}  // namespace

RollCall roll_call(Store& store, const std::string& key, const std::vector<int>& members, int me,
                   std::chrono::milliseconds window, const Bytes& answer) {
  RollCall result;
  std::vector<std::string> pending;
  for (const int r : members)
    if (r != me) pending.push_back(roll_call_answer_key(key, r));
  const auto deadline = std::chrono::steady_clock::now() + window;
  try {
    store.set(roll_call_answer_key(key, me), answer, window);
    for (;;) {
      // One bounded query per poll; a store failing midway keeps the answers of earlier polls.
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pending = store.missing(pending, std::max({left, window, least_query_budget}));
      if (pending.empty() || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(poll_interval);
    }
    if (store.hosted_here()) std::this_thread::sleep_for(host_linger);
  } catch (const TimeoutError&) {
    return host_unresponsive(store, members, std::move(pending));
  } catch (const dist::Error&) {
    result.complete = false;
  }
  result.absent = ranks_of(pending);
  return result;
}

}  // namespace dist::core
