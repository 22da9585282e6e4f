// Bringing an nccl world up: every member announces itself in the store (a missing member is
// named at the deadline), rank 0 creates NCCL's unique id and the others read it from the store.
#pragma once

#include <nccl.h>

#include "core/store/store.hpp"
#include "real/nccl/communicator.hpp"

namespace dist::real {

// The unique id of the communicator `spec` describes, exchanged through `store` (keys "joined/<r>"
// and "id" under it). TimeoutError naming the ranks that never came.
ncclUniqueId exchange_unique_id(core::Store& store, const CommSpec& spec);

}  // namespace dist::real
