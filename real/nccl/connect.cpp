// exchange_unique_id: arrival check, then rank 0's ncclGetUniqueId published through the store.
#include "real/nccl/connect.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "core/group_text.hpp"
#include "core/store/join.hpp"
#include "dist/errors.hpp"
#include "real/nccl/errors.hpp"

namespace dist::real {

ncclUniqueId exchange_unique_id(core::Store& store, const CommSpec& spec) {
  core::wait_for_members(store, spec.global_ranks, spec.rank, spec.timeout, "nccl",
                         core::group_text(spec.global_ranks), "every rank must call init_process_group");
  ncclUniqueId id{};
  if (spec.rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) throw_nccl_error(r, "ncclGetUniqueId on the " + core::group_text(spec.global_ranks));
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
