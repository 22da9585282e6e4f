// The one translation of CUDA and NCCL codes into dist's errors (see errors.hpp).
#include "real/nccl/errors.hpp"

#include "core/group_text.hpp"
#include "dist/errors.hpp"

namespace dist::real {

std::string cuda_error_text(cudaError_t code) {
  return std::string(cudaGetErrorName(code)) + " (" + cudaGetErrorString(code) + ")";
}

std::string nccl_error_text(ncclResult_t code) {
  const char* name = "ncclUnknownError";
  switch (code) {
    case ncclSuccess: name = "ncclSuccess"; break;
    case ncclUnhandledCudaError: name = "ncclUnhandledCudaError"; break;
    case ncclSystemError: name = "ncclSystemError"; break;
    case ncclInternalError: name = "ncclInternalError"; break;
    case ncclInvalidArgument: name = "ncclInvalidArgument"; break;
    case ncclInvalidUsage: name = "ncclInvalidUsage"; break;
    case ncclRemoteError: name = "ncclRemoteError"; break;
    case ncclInProgress: name = "ncclInProgress"; break;
    default: break;
  }
  return std::string(name) + " (" + ncclGetErrorString(code) + ")";
}

void throw_cuda_error(cudaError_t code, const std::string& where) {
  throw BackendError("nccl " + where + ": CUDA error " + cuda_error_text(code),
                     static_cast<int>(code));
}

void throw_nccl_error(ncclResult_t code, const std::string& where, const std::string& detail,
                      const std::vector<int>& absent) {
  const std::string tail = detail.empty() ? "" : ": " + detail;
  if (code == ncclRemoteError) {
    const std::string who =
        absent.empty() ? "a peer" : core::ranks_phrase(absent) + " (absent from the roll call)";
    throw RankFailure("nccl " + where + " failed: " + who + " exited, aborted or became unreachable (" +
                          nccl_error_text(code) + tail + ")",
                      absent.empty() ? -1 : absent.front());
  }
  throw BackendError("nccl " + where + " failed: " + nccl_error_text(code) + tail,
                     static_cast<int>(code));
}

void throw_nccl_timeout(const std::string& where, std::chrono::milliseconds timeout, int peer) {
  auto absent = core::name_absentees(peer);
  if (peer < 0) absent.phrase += ", or is stuck or dead";
  throw TimeoutError("nccl " + where + " did not complete within " +
                         std::to_string(timeout.count()) + " ms: " + absent.phrase +
                         "; the communicator was aborted (create a new process group to continue)",
                     std::move(absent.ranks));
}

}  // namespace dist::real
