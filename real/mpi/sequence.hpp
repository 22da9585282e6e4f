// A group's collectives in the order its rank called them, each agreed before MPI moves its data
// (agreement.hpp). MPI matches a communicator's collectives by the order in which each rank posts
// them, so the sequence posts every step of every collective in the order of the calls: a
// collective's first step only once the one before has posted its last (its data call, or the
// all_gather that explains a disagreement). Whoever waits on or polls any of the group's Works
// moves every collective along; one whose Work was dropped is still carried through, so the peers
// see the same sequence.
//
// Steps: agree (every collective; a barrier's or a split's only one), then for an uneven
// all_to_all the exchange of split sizes and the all_gather of the Declared records, then the
// data call. A failed agreement is followed by the all_gather of the records, and the collective
// ends in the DesyncError they spell out, on every rank, before any of its data moved.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/calls/call.hpp"
#include "real/mpi/agreement.hpp"
#include "real/mpi/runtime.hpp"
#include "real/mpi/scratch.hpp"

namespace dist::real {

struct Collective {
  // Set by the caller before Sequence::start.
  core::CallDesc call;
  Clock::time_point deadline;
  std::function<int(MPI_Request*)> post;      // the data call; empty: none (a barrier, a split)
  std::vector<std::uint64_t> sends, expects;  // an uneven all_to_all's splits, per group rank
  Scratch scratch;                            // the staged data, MPI's once the data call is posted

  // The sequence's, under its lock.
  std::uint64_t index = 0;  // its place in the group's sequence, from 1 (the same on every rank)
  enum class Step : std::uint8_t { agree, splits, declare, data, done };
  Step step = Step::agree;
  bool posted = false;   // the step's MPI call was made (its request is pending unless done)
  bool failing = false;  // the agreement failed: the declare step is the last
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Status status{};       // the data call's
  Scratch control;           // the agreement's, the split sizes' or the records' buffer
  Declared declared;         // this rank's record
  std::exception_ptr error;  // set when it ended without its data call (a disagreement)
};

class Sequence {
 public:
  Sequence(MPI_Comm comm, std::vector<int> world_ranks)
      : comm_(comm), world_ranks_(std::move(world_ranks)) {}

  // Appends a collective and posts what may be posted.
  void start(std::shared_ptr<Collective> collective);
  // Moves every collective along once (never blocks); true when `c` is done.
  bool advance(const Collective& c);
  // advance() until `c` is done (true) or `deadline` passes (false), polling as poll_until does.
  bool wait(const Collective& c, Clock::time_point deadline);
  // After a timeout, or when the group goes: every pending step is given up (runtime.hpp,
  // abandon, with the memory MPI may still use), every collective not done ends with `why`, and
  // so does every later one. Returns whether MPI still had a step in flight.
  bool give_up(std::exception_ptr why);

 private:
  void advance_locked();
  bool give_up_locked(std::exception_ptr why);
  bool post(Collective& c);  // false: MPI refused it (the sequence gave up)
  // MPI returned `code` for a step of `c`: the sequence gives up with that BackendError.
  void break_on(int code, const Collective& c);
  void finish_step(Collective& c);
  void fail(Collective& c, std::exception_ptr error);

  MPI_Comm comm_;
  std::vector<int> world_ranks_;
  std::mutex mutex_;
  std::deque<std::shared_ptr<Collective>> queue_;  // not yet done, in call order
  std::uint64_t started_ = 0;
  std::exception_ptr broken_;  // after give_up or an MPI error
};

}  // namespace dist::real
