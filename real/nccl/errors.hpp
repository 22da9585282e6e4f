// CUDA and NCCL result codes -> dist errors, in one place: a peer's failure (ncclRemoteError)
// becomes RankFailure, everything else BackendError carrying the vendor code; deadlines passed
// while waiting on the GPU become TimeoutError naming the operation and its sequence number.
// `absent` is what the roll call after the failure found (core/store/roll_call.hpp): the members
// that never arrived, named as the failed or missing ranks.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <string>
#include <vector>

namespace dist::real {

// "cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime version)"
std::string cuda_error_text(cudaError_t code);
// "ncclRemoteError (remote process exited or there was a network error)"
std::string nccl_error_text(ncclResult_t code);

// BackendError("nccl <where>: CUDA error <text>"), vendor_code = the CUDA code.
[[noreturn]] void throw_cuda_error(cudaError_t code, const std::string& where);
// ncclRemoteError -> RankFailure naming the first absent member (-1 when none is known); other
// codes -> BackendError with the NCCL code as vendor code. `detail` is ncclGetLastError's text.
[[noreturn]] void throw_nccl_error(ncclResult_t code, const std::string& where,
                                   const std::string& detail = "",
                                   const std::vector<int>& absent = {});
// TimeoutError("nccl <where> did not complete within N ms: rank 2 never arrived ...; the
// communicator was aborted"), carrying the absent members as its missing ranks. `who` replaces
// the phrase naming them (core::name_absentees's, e.g. "rank 1 did not take part" for p2p).
[[noreturn]] void throw_nccl_timeout(const std::string& where, std::chrono::milliseconds timeout,
                                     const std::vector<int>& absent = {},
                                     const std::string& who = "");

inline void check_cuda(cudaError_t code, const std::string& where) {
  if (code != cudaSuccess) throw_cuda_error(code, where);
}

}  // namespace dist::real
