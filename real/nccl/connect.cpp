// exchange_unique_id: arrival check, then rank 0's ncclGetUniqueId published through the store.
#include "real/nccl/connect.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "core/store/join.hpp"
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

}  // namespace

ncclUniqueId exchange_unique_id(core::Store& store, const CommSpec& spec) {
  core::wait_for_members(store, spec.global_ranks, spec.rank, spec.timeout, "nccl",
                         group_text(spec), "every rank must call init_process_group");
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
