// One group's MPI communicator and what its operations share: a duplicate of it for p2p's
// acknowledgements, and the deadline wait that turns a timeout into TimeoutError (naming the peer,
// or the members a roll call in the store finds absent) and leaves the group unusable, since MPI
// cannot cancel a collective that started.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/store/store.hpp"
#include "real/mpi/runtime.hpp"

namespace dist::real {

// What a rank needs to use an MPI group.
struct MpiGroupSpec {
  MPI_Comm comm = MPI_COMM_NULL;       // owned by the MpiComm made from it
  std::shared_ptr<core::Store> store;  // the job's store (roll calls after a timeout)
  std::string prefix;                  // unique per group: its keys live under it
  std::vector<int> global_ranks;       // the members' world ranks, in group order
  int rank = 0;                        // the caller's rank in the group
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
};

class MpiComm {
 public:
  // Takes ownership of spec.comm, makes MPI report its errors as codes (MPI_ERRORS_RETURN) and
  // duplicates it (MPI_Comm_dup: collective, so every member constructs its MpiComm at once).
  explicit MpiComm(MpiGroupSpec spec);
  // Frees the communicators, unless MPI was finalized or a timeout left an operation on them.
  ~MpiComm();
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  const MpiGroupSpec& spec() const { return spec_; }
  MPI_Comm handle() const { return spec_.comm; }
  // The duplicate on which a recv tells its send what it expects (p2p.cpp), with the send's tag:
  // a channel of its own, so it never matches the program's messages, and in order, as MPI keeps
  // messages of one source, tag and communicator.
  MPI_Comm acks() const { return acks_; }
  int size() const { return static_cast<int>(spec_.global_ranks.size()); }
  // "mpi all_reduce #3 on the group of world ranks [0, 1]"
  std::string where(const std::string& operation) const;

  // Whether no timeout has left the group unusable; else throw_unusable says so.
  bool usable() const noexcept { return !unusable_.load(std::memory_order_acquire); }
  [[noreturn]] void throw_unusable(const std::string& operation) const;
  void check_usable(const std::string& operation) const {
    if (!usable()) throw_unusable(operation);
  }

  // After `operation` timed out: the group becomes unusable, and TimeoutError names `peer` (a
  // world rank; p2p) or, for a collective (peer < 0), the members that do not answer a roll
  // call. The request stays pending, for the caller to abandon().
  [[noreturn]] void timed_out(const std::string& operation, int peer);

  // Waits for `request` until `deadline`; timed_out(operation, -1) when it passes.
  void wait(MPI_Request& request, Clock::time_point deadline, const std::string& operation);

 private:
  MpiGroupSpec spec_;
  MPI_Comm acks_ = MPI_COMM_NULL;
  std::atomic<bool> unusable_{false};
  mutable std::mutex mutex_;
  std::string unusable_after_;  // the operation that timed out (under mutex_)
};

}  // namespace dist::real
