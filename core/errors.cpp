// The names of dist's error codes (ErrorCode -> string), used in messages and logs.
#include "dist/errors.hpp"

namespace dist {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::not_initialized: return "not_initialized";
    case ErrorCode::desync: return "desync";
    case ErrorCode::deadlock: return "deadlock";
    case ErrorCode::timeout: return "timeout";
    case ErrorCode::rank_failure: return "rank_failure";
    case ErrorCode::aborted: return "aborted";
    case ErrorCode::backend: return "backend";
  }
  return "unknown";
}

}  // namespace dist
