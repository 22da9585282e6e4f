// The given-up record: one key per group, "<index> <world rank>", the first collective given up.
#include "core/store/given_up.hpp"

#include <sstream>

#include "dist/errors.hpp"

namespace dist::core {

namespace {
std::string key_of(const std::string& prefix) { return prefix + "/given_up"; }
}  // namespace

void record_given_up(Store& store, const std::string& prefix, std::uint64_t index, int me) {
  if (index == 0) return;
  try {
    store.set(key_of(prefix), to_bytes(std::to_string(index) + " " + std::to_string(me)),
              given_up_wait);
  } catch (const dist::Error&) {  // the store is gone: a late peer times out instead
  }
}

int given_up_by(Store& store, const std::string& prefix, std::uint64_t index) {
  std::uint64_t first = 0;
  int by = -1;
  try {
    const std::string key = key_of(prefix);
    if (!store.check({key})) return -1;
    std::istringstream text(to_string(store.get(key, given_up_wait)));
    text >> first >> by;
  } catch (const dist::Error&) {
    return -1;
  }
  return first == 0 || first > index ? -1 : by;
}

std::string given_up_reason(int by, const std::string& why) {
  return "rank " + std::to_string(by) + " gave up this collective at its timeout (" + why +
         "); the group is unusable: create a new process group";
}

}  // namespace dist::core
