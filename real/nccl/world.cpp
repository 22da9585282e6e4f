// make_nccl_world: the world communicator on the current device, its unique id exchanged through
// the job's store under "nccl/world"; and the device probing behind the no-GPU messages.
#include "real/nccl/world.hpp"

#include <cuda_runtime_api.h>

#include "dist/errors.hpp"
#include "real/nccl/backend.hpp"
#include "real/nccl/connect.hpp"
#include "real/nccl/device_memory.hpp"
#include "real/nccl/errors.hpp"

namespace dist::real {

namespace {
// cuda tensors work in every program that links the nccl backend (this file always is).
[[maybe_unused]] const core::DeviceMemory& registered_memory = cuda_device_memory();
}  // namespace

bool nccl_built() { return true; }

std::string nccl_unavailable_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return "no GPU present: cudaGetDeviceCount returned " + cuda_error_text(e);
  if (count == 0) return "no GPU present: cudaGetDeviceCount found 0 devices";
  return "";
}

int nccl_device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

void require_nccl() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    throw BackendError("init_process_group(nccl): " + nccl_unavailable_reason(),
                       static_cast<int>(e));
}

void select_nccl_device(int local_rank) {
  const int count = nccl_device_count();
  if (count == 0 || local_rank < 0) return;
  check_cuda(cudaSetDevice(local_rank % count),
             "init_dist: selecting cuda:" + std::to_string(local_rank % count) + " for local rank " +
                 std::to_string(local_rank));
}

std::shared_ptr<core::BackendImpl> make_nccl_world(const WorldSpec& spec) {
  require_nccl();
  int device = 0;
  check_cuda(cudaGetDevice(&device), "init: reading the current device");
  CommSpec comm{world_ranks_of(spec), spec.rank, device, spec.timeout, spec.store, "nccl/world"};
  core::PrefixStore store("nccl/world", spec.store);
  const ncclUniqueId id = exchange_unique_id(store, comm);
  return std::make_shared<NcclBackend>(Communicator::create(id, std::move(comm)));
}

}  // namespace dist::real
