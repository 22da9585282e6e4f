// wait_for_members: the store-based arrival check shared by the real backends' group setup; who
// is missing is asked in a bounded number of requests, so any world size honours the timeout.
#include "core/store/join.hpp"

#include <algorithm>

#include "dist/errors.hpp"

namespace dist::core {

namespace {
constexpr std::size_t named_at_most = 32;  // ranks listed in the error; the rest are counted

std::string names_of(const std::vector<int> &ranks) {
  std::string names;
  for (std::size_t i = 0; i < ranks.size() && i < named_at_most; ++i)
    names += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > named_at_most)
    names += " and " + std::to_string(ranks.size() - named_at_most) + " more";
  return names;
}
}  // namespace

void wait_for_members(Store &store, const std::vector<int> &global_ranks, int rank,
                      std::chrono::milliseconds timeout, const std::string &who,
                      const std::string &group, const std::string &hint) {
  const auto key = [](std::size_t r) { return "joined/" + std::to_string(r); };
  store.set(key(static_cast<std::size_t>(rank)), {});
  std::vector<std::string> keys;
  keys.reserve(global_ranks.size());
  for (std::size_t r = 0; r < global_ranks.size(); ++r) keys.push_back(key(r));
  try {
    store.wait(keys, timeout);
  } catch (const TimeoutError &) {
    std::vector<std::string> absent;
    try {
      absent = store.missing(keys, std::max(timeout, std::chrono::milliseconds(3000)));
    } catch (const TimeoutError &) {
      const int host = store.host_rank();
      throw TimeoutError(who + ": the store's host, rank " + std::to_string(host) +
                             ", is unresponsive (no answer while waiting for the " + group +
                             " to join within " + std::to_string(timeout.count()) + " ms)",
                         host >= 0 ? std::vector<int>{host} : std::vector<int>{});
    }
    std::vector<int> missing;
    missing.reserve(absent.size());
    for (const auto &k : absent)
      missing.push_back(global_ranks[std::stoul(k.substr(k.rfind('/') + 1))]);
    throw TimeoutError(who + ": rank(s) " + names_of(missing) + " did not join the " + group +
                           " within " + std::to_string(timeout.count()) + " ms (" + hint + ")",
                       missing);
  }
}

}  // namespace dist::core
