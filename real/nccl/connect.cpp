// exchange_unique_id: arrival check, then rank 0's ncclGetUniqueId published through the store.
#include "real/nccl/connect.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "dist/errors.hpp"
#include "real/nccl/errors.hpp"

namespace dist::real {

namespace {
std::string group_text(const CommSpec& spec) {
  std::string text = "group of world ranks [";
  for (std::size_t i = 0; i < spec.global_ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(spec.global_ranks[i]);
  return text + "]";
}

void wait_for_members(core::Store& store, const CommSpec& spec) {
  const auto key = [](std::size_t r) { return "joined/" + std::to_string(r); };
  store.set(key(static_cast<std::size_t>(spec.rank)), {});
  std::vector<std::string> keys;
  for (std::size_t r = 0; r < spec.global_ranks.size(); ++r) keys.push_back(key(r));
  try {
    store.wait(keys, spec.timeout);
  } catch (const TimeoutError&) {
    std::vector<int> missing;
    std::string names;
    for (std::size_t r = 0; r < keys.size(); ++r)
      if (!store.check({keys[r]})) {
        missing.push_back(spec.global_ranks[r]);
        names += (names.empty() ? "" : ", ") + std::to_string(spec.global_ranks[r]);
      }
    throw TimeoutError("nccl: rank(s) " + names + " did not join the " + group_text(spec) +
                           " within " + std::to_string(spec.timeout.count()) +
                           " ms (every rank must call init_process_group)",
                       missing);
  }
}
}  // namespace

ncclUniqueId exchange_unique_id(core::Store& store, const CommSpec& spec) {
  wait_for_members(store, spec);
  ncclUniqueId id{};
  if (spec.rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) throw_nccl_error(r, "ncclGetUniqueId on the " + group_text(spec));
    core::Bytes bytes(sizeof id.internal);
    std::memcpy(bytes.data(), id.internal, sizeof id.internal);
    store.set("id", bytes);
    return id;
  }
  const core::Bytes bytes = store.get("id", spec.timeout);
  if (bytes.size() != sizeof id.internal)
    throw BackendError("nccl: the unique id in the store has " + std::to_string(bytes.size()) +
                       " bytes, not " + std::to_string(sizeof id.internal) +
                       " (ranks built with different NCCL versions?)");
  std::memcpy(id.internal, bytes.data(), sizeof id.internal);
  return id;
}

}  // namespace dist::real
