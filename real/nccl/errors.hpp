// CUDA and NCCL result codes -> dist errors, in one place: a peer's failure (ncclRemoteError)
// becomes RankFailure, everything else BackendError carrying the vendor code; deadlines passed
// while waiting on the GPU become TimeoutError naming the operation and its sequence number.
// `absent` is what the roll call after the failure found (core/store/roll_call.hpp): the members
// that never arrived, named as the failed or missing ranks.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <concepts>
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
// TimeoutError("nccl <where> did not complete within N ms: rank 1 did not take part; the
// communicator was aborted"): a p2p call names its `peer` (a world rank; its missing rank), a
// collective (peer -1) nobody, which the call layer above then diagnoses.
[[noreturn]] void throw_nccl_timeout(const std::string& where, std::chrono::milliseconds timeout,
                                     int peer = -1);

inline void check_cuda(cudaError_t code, const std::string& where) {
  if (code != cudaSuccess) throw_cuda_error(code, where);
}
// The same with the text made only on failure: calls on every operation's path take a lambda, as
// building "<op> on the group of world ranks [...]" on every call would cost as much as the call.
template <class MakeWhere>
requires std::invocable<MakeWhere>
inline void check_cuda(cudaError_t code, MakeWhere&& where) {
  if (code != cudaSuccess) throw_cuda_error(code, where());
}

}  // namespace dist::real
