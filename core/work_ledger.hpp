// Misuse of a Work that sim and the real backends catch alike (MUST's checks of MPI requests): a
// Work handed to the user by an *_async call, isend or irecv and never waited when its rank
// returns (sim) or calls destroy_dist, and an isend's buffer changed before its wait (a checksum
// at the call and at the wait: on in sim unless Cluster::check_send_buffers is false, on real
// backends under DIST_DEBUG=detail).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/work_state.hpp"
#include "dist/export.hpp"

namespace dist::core {

// One rank's Works not yet waited, in the order they were issued. detail::track_unwaited wraps
// each in a decorator (work_ledger.cpp) that leaves the ledger once the Work is waited.
class DIST_API WorkLedger {
 public:
  // Enters `state`; returns its ticket for remove().
  std::uint64_t add(std::shared_ptr<detail::WorkState> state);
  void remove(std::uint64_t ticket);
  // The Works still not waited, oldest first; the ledger lets go of them.
  std::vector<std::shared_ptr<detail::WorkState>> take();
  // The collectives on `group` (WorkState::collective_of()) still not waited, oldest first; they
  // stay in the ledger until waited.
  std::vector<std::shared_ptr<detail::WorkState>> collectives_of(const void* group);

 private:
  std::mutex mutex_;
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, std::shared_ptr<detail::WorkState>> pending_;
};

// The Work's call, as errors name it ("all_reduce(op=sum, int32 x 4) on world #3").
DIST_API std::string describe_work(const detail::WorkState& state);

// Raises InvalidArgument naming the Works in `ledger` that were never waited; `event` says what
// the rank did ("rank 0 returned", "destroy_dist() was called"). The ledger is emptied either way.
DIST_API void check_all_waited(WorkLedger& ledger, const std::string& event);

// A checksum of a buffer's bytes (the isend check's).
DIST_API std::uint64_t content_sum(const void* data, std::size_t bytes);

}  // namespace dist::core
