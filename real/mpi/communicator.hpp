// One group's MPI communicator and what its operations share: a duplicate of it for p2p's
// acknowledgements, and the deadline wait that turns a timeout into TimeoutError (naming the peer,
// or the members a roll call in the store finds absent) and leaves the group unusable, since MPI
// cannot cancel a collective that started.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/store/store.hpp"
#include "real/mpi/runtime.hpp"
#include "real/mpi/sequence.hpp"

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
  // Gives the sequence up, then frees the communicators, unless MPI was finalized or an operation
  // is still pending on them (a timeout, a Work dropped or left unwaited).
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

  // A p2p operation was given up with its requests pending: the communicators stay (MPI may still
  // complete it at exit).
  void left_pending() noexcept { left_pending_.store(true, std::memory_order_relaxed); }

  // The group's collectives, in call order.
  Sequence& sequence() { return sequence_; }

  // After `operation` timed out: the group becomes unusable (its sequence is given up), and
  // TimeoutError names `peer` (a world rank; p2p) or, for a collective (peer < 0), the members
  // that do not answer a roll call. A p2p request stays pending, for the caller to abandon().
  // A collective's (`index` in the sequence) is written to the store, for a peer that arrives
  // later (throw_if_given_up).
  [[noreturn]] void timed_out(const std::string& operation, int peer, std::uint64_t index = 0);
  // timed_out without the error: the group is unusable, and collective `index` (0: none) is
  // recorded as given up (Work::wait's own timeout on a collective).
  void give_up(const std::string& operation, std::uint64_t index);
  // When a member gave up collective `index` (or one before it) at its timeout, that call can
  // never complete here: the group becomes unusable and BackendError names the member. Asks the
  // store (a late rank's collective that has waited a while calls it).
  void throw_if_given_up(const std::string& operation, std::uint64_t index);

 private:
  void retire(const std::string& operation);  // unusable from now on; the sequence given up

  MpiGroupSpec spec_;
  MPI_Comm acks_ = MPI_COMM_NULL;
  Sequence sequence_;
  std::atomic<bool> unusable_{false};
  std::atomic<bool> left_pending_{false};
  mutable std::mutex mutex_;
  std::string unusable_after_;  // the operation that timed out (under mutex_)
};

}  // namespace dist::real
