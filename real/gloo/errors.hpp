// gloo exceptions -> dist errors: timeout -> TimeoutError (the operation, and a p2p
// call's peer; the call layer diagnoses a collective's: core/calls/diagnosis.hpp); broken
// connection -> RankFailure naming the lost rank (from gloo's address, or the "failed"/"left"
// records ranks leave in the store, so cascades name the first failure); else BackendError.
// A rank that loses a peer closes its own connections, so members waiting on it fail at once and
// read the records; the rank hosting the store keeps it up until the others have recorded too.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/store/store.hpp"

namespace gloo {
class Context;
}

namespace dist::real {

class ErrorMapper {
 public:
  ErrorMapper() = default;
  // `store` holds the records (under "gloo/failed/" and "gloo/left/" + world rank) and the roll
  // calls of timed-out collectives (under the group's store `prefix`); null: none.
  ErrorMapper(std::vector<int> global_ranks, int my_global_rank, std::chrono::milliseconds timeout,
              std::shared_ptr<core::Store> store, std::string prefix = {})
      : global_ranks_(std::move(global_ranks)), me_(my_global_rank), timeout_(timeout),
        store_(std::move(store)), prefix_(std::move(prefix)) {}

  // Registers the transport address ("[ip]:port", as gloo prints it) of a peer's world rank.
  void add_peer(std::string address, int global_rank);

  // Rethrows the exception being handled (call from a catch block) as a dist error. `operation`
  // reads like "all_reduce" or "send to rank 1 (tag 0)"; `peer` is the world rank a p2p operation
  // talks to (-1: none); `connections`, the group's gloo context, is closed when a peer is lost.
  [[noreturn]] void rethrow_current(const std::string& operation, int peer = -1,
                                    ::gloo::Context* connections = nullptr) const;

  // Records that this rank is leaving (before its connections close), so peers can name it.
  void record_leaving() const;

  // dist::abort of the group on this rank (`why`, an Aborted): its connections close because of
  // it, not because a peer was lost, so a send or receive that fails from now on raises `why`
  // (p2p_work.hpp; a collective's Work learns it from its queue). Null: not aborted.
  void set_aborted(std::exception_ptr why);
  std::exception_ptr aborted() const;

  // "group of world ranks [0, 1, 2]"
  std::string group_text() const;

 private:
  int peer_in(const std::string& message) const;
  // The rank behind a lost connection: the one gloo's message names, else the only other member,
  // else the first leaving or failed member the records show (waiting briefly for one to appear).
  int lost_rank(const std::string& message, int peer) const;
  // Follows the failure records from `lost` to the rank that failed first.
  int first_failure(int lost) const;
  int recorded_loss() const;
  // On the store's host: waits (bounded) until every member but us and `lost` has a record.
  void await_records(int lost) const;
  // The store's host when it is another member of this group (its store vanishing names it), else -1.
  int store_host_peer() const;
  // The TimeoutError of the operation at `where`: it names the peer of a p2p operation; a
  // collective's is diagnosed by the call layer above.
  [[noreturn]] void throw_timeout(const std::string& where, int peer,
                                  const std::string& gloo_message) const;

  std::vector<int> global_ranks_;
  int me_ = -1;
  std::chrono::milliseconds timeout_{0};
  std::shared_ptr<core::Store> store_;
  std::string prefix_;
  std::map<std::string, int> peers_;  // transport address -> world rank
  mutable std::mutex aborted_mutex_;
  std::exception_ptr aborted_;
};

}  // namespace dist::real
