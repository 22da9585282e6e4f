// The error classes of dist: every failure is an exception deriving from dist::Error, carrying a
// closed ErrorCode so callers can switch on the kind without dynamic_cast.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dist/export.hpp"

namespace dist {

enum class ErrorCode {
  invalid_argument,  // a bad argument: wrong size, out-of-range rank, unsupported dtype/op, ...
  not_initialized,   // an operation that needs a distributed context was called without one
  desync,            // ranks disagree on a collective (kind, dtype, count, root, op, ...)
  deadlock,          // (sim) no rank can make progress
  timeout,           // a blocking call passed its deadline
  rank_failure,      // a peer died or aborted
  backend,           // the underlying engine (gloo, nccl, mpi, cuda, os) reported an error
  aborted,           // a call on a group this rank aborted (dist::abort)
};
DIST_API std::string_view to_string(ErrorCode code);

class DIST_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

class DIST_API InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& message)
      : Error(ErrorCode::invalid_argument, message) {}
};

class DIST_API NotInitialized : public Error {
 public:
  explicit NotInitialized(const std::string& message)
      : Error(ErrorCode::not_initialized, message) {}
};

// Ranks called different collectives, or the same one with different arguments. The message
// lists each rank's call and names the field that differs.
class DIST_API DesyncError : public Error {
 public:
  explicit DesyncError(const std::string& message) : Error(ErrorCode::desync, message) {}
};

// (sim) Every live rank is blocked and no pending operation can complete. The message lists
// what each rank is waiting in, and which ranks have already returned.
class DIST_API DeadlockError : public Error {
 public:
  explicit DeadlockError(const std::string& message) : Error(ErrorCode::deadlock, message) {}
};

// A blocking call passed its deadline. Names the operation, its sequence number and the ranks
// that never arrived.
class DIST_API TimeoutError : public Error {
 public:
  TimeoutError(const std::string& message, std::vector<int> missing_ranks = {})
      : Error(ErrorCode::timeout, message), missing_ranks_(std::move(missing_ranks)) {}
  const std::vector<int>& missing_ranks() const noexcept { return missing_ranks_; }

 private:
  std::vector<int> missing_ranks_;
};

// A peer rank died or aborted while this rank depended on it.
class DIST_API RankFailure : public Error {
 public:
  RankFailure(const std::string& message, int failed_rank)
      : RankFailure(message,
                    failed_rank >= 0 ? std::vector<int>{failed_rank} : std::vector<int>{}) {}
  // `failed_ranks`: every (global) rank known to have failed, the first one first.
  RankFailure(const std::string& message, std::vector<int> failed_ranks)
      : Error(ErrorCode::rank_failure, message), failed_ranks_(std::move(failed_ranks)) {}
  // The (global) rank that failed first; -1 when none is known.
  int failed_rank() const noexcept { return failed_ranks_.empty() ? -1 : failed_ranks_.front(); }
  // Every (global) rank known to have failed when this error was raised, the first one first
  // (empty when none is known).
  const std::vector<int>& failed_ranks() const noexcept { return failed_ranks_; }

 private:
  std::vector<int> failed_ranks_;
};

// A call on a group this rank aborted with dist::abort (or that a shrink_group with
// abort_parent aborted): it ended at once, without waiting for any peer. Names the group and
// where it was aborted.
class DIST_API Aborted : public Error {
 public:
  explicit Aborted(const std::string& message) : Error(ErrorCode::aborted, message) {}
};

// The underlying engine reported an error; `vendor_code` is its own code (0 when it has none).
class DIST_API BackendError : public Error {
 public:
  BackendError(const std::string& message, int vendor_code = 0)
      : Error(ErrorCode::backend, message), vendor_code_(vendor_code) {}
  int vendor_code() const noexcept { return vendor_code_; }

 private:
  int vendor_code_;
};

// Whether `e` holds an exception of class E (or one derived from it); false when null.
template <class E>
bool holds_error(const std::exception_ptr& e) {
  if (!e) return false;
  try {
    std::rethrow_exception(e);
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace dist
