// The one translation of CUDA and NCCL codes into dist's errors (see errors.hpp).
#include "real/nccl/errors.hpp"

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

void throw_nccl_error(ncclResult_t code, const std::string& where, const std::string& detail) {
  const std::string tail = detail.empty() ? "" : ": " + detail;
  if (code == ncclRemoteError)
    throw RankFailure("nccl " + where + " failed: a peer exited, aborted or became unreachable (" +
                          nccl_error_text(code) + tail + ")",
                      -1);
  throw BackendError("nccl " + where + " failed: " + nccl_error_text(code) + tail,
                     static_cast<int>(code));
}

void throw_nccl_timeout(const std::string& where, std::chrono::milliseconds timeout) {
  throw TimeoutError("nccl " + where + " did not complete within " +
                     std::to_string(timeout.count()) +
                     " ms: a peer did not take part, or is stuck or dead; the communicator was "
                     "aborted (create a new process group to continue)");
}

}  // namespace dist::real
