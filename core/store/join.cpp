// wait_for_members: the store-based arrival check shared by the real backends'
// group setup.
#include "core/store/join.hpp"

#include "dist/errors.hpp"

namespace dist::core {

void wait_for_members(Store &store, const std::vector<int> &global_ranks,
                      int rank, std::chrono::milliseconds timeout,
                      const std::string &who, const std::string &group,
                      const std::string &hint) {
  const auto key = [](std::size_t r) { return "joined/" + std::to_string(r); };
  store.set(key(static_cast<std::size_t>(rank)), {});
  std::vector<std::string> keys;
  for (std::size_t r = 0; r < global_ranks.size(); ++r)
    keys.push_back(key(r));
  try {
    store.wait(keys, timeout);
  } catch (const TimeoutError &) {
    std::vector<int> missing;
    std::string names;
    for (std::size_t r = 0; r < keys.size(); ++r)
      if (!store.check({keys[r]})) {
        missing.push_back(global_ranks[r]);
        names += (names.empty() ? "" : ", ") + std::to_string(global_ranks[r]);
      }
    throw TimeoutError(
        who + ": rank(s) " + names + " did not join the " + group + " within " +
            std::to_string(timeout.count()) + " ms (" + hint + ")",
        missing);
  }
}

} // namespace dist::core
