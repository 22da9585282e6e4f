// The nccl backend's world and device probing: whether it was built, why it cannot run here,
// device selection from the local rank, and the world backend of one rank. entry.cpp makes them
// the nccl row of the registry; without CUDA/NCCL (unavailable.cpp) they say why.
#pragma once

#include <memory>
#include <string>

#include "core/backend_impl.hpp"
#include "real/world.hpp"

namespace dist::real {

bool nccl_built();
// Empty when the nccl backend can run in this process; else why not: "dist was built without
// nccl: ..." or "no GPU present: cudaGetDeviceCount returned ...".
std::string nccl_unavailable_reason();
// The GPUs this process sees (0 without a GPU, or without nccl).
int nccl_device_count();
// BackendError("init_process_group(nccl): <reason>") when nccl cannot run here.
void require_nccl();
// Makes device local_rank % (number of GPUs) current on the calling thread (MMEngine's
// torch.cuda.set_device); does nothing when there is no GPU (init then says why).
void select_nccl_device(int local_rank);
// Connects rank spec.rank of the nccl world on the calling thread's current CUDA device.
std::shared_ptr<core::BackendImpl> make_nccl_world(const WorldSpec& spec);

}  // namespace dist::real
