// roll_call: one key per member under the collective's key; answers are polled with check(), so a
// store whose host is gone ends the roll call at once instead of at the window.
#include "core/store/roll_call.hpp"

#include <algorithm>
#include <thread>

#include "dist/errors.hpp"

namespace dist::core {

namespace {
constexpr auto poll_interval = std::chrono::milliseconds(10);
std::string answer_key(const std::string& key, int rank) {
  return "roll/" + key + "/" + std::to_string(rank);
}
}  // namespace

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
      std::erase_if(pending, [&](int r) { return store.check({answer_key(key, r)}); });
      if (pending.empty() || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(poll_interval);
    }
  } catch (const dist::Error&) {
    result.complete = false;
  }
  result.absent = std::move(pending);
  return result;
}

}  // namespace dist::core
