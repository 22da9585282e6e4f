// The nccl row of the registry: ranks as threads or processes, one GPU each (NCCL refuses two
// ranks on one GPU); preparing a rank makes GPU local_rank % count current, as MMEngine does.
#include "real/nccl/world.hpp"
#include "real/registry.hpp"

namespace dist::real {

namespace {
std::string unavailable(int ranks) {
  if (std::string why = nccl_unavailable_reason(); !why.empty()) return why;
  const int gpus = nccl_device_count();
  if (ranks > gpus)
    return std::to_string(ranks) + " ranks need " + std::to_string(ranks) +
           " GPUs (one per rank; NCCL refuses two ranks on one GPU), found " + std::to_string(gpus);
  return "";
}
}  // namespace

extern const BackendEntry nccl_entry;
constinit const BackendEntry nccl_entry{.kind = dist::Backend::nccl,
                                        .threads = true,
                                        .launcher = "",
                                        .unavailable = unavailable,
                                        .prepare = select_nccl_device,
                                        .make_world = make_nccl_world,
                                        .rejoins = true};

}  // namespace dist::real
