// MpiWork: completion by polling against the deadline (MpiComm::timed_out on a timeout) or by one
// MPI_Test of each pending request. CollectiveWork: the same through the group's sequence.
#include "real/mpi/work.hpp"

#include <algorithm>

namespace dist::real {

std::string MpiOperation::name() const {
  if (peer >= 0)
    return std::string(kind) + " rank " + std::to_string(peer) + " (tag " + std::to_string(tag) +
           ")";
  return kind;  // the call layer puts the user's sequence number in front
}

MpiWork::MpiWork(std::shared_ptr<MpiComm> comm, const Requests& requests, MpiOperation operation)
    : comm_(std::move(comm)), requests_(requests), operation_(std::move(operation)) {}

MpiWork::~MpiWork() {
  // Never waited for: MPI still owns the scratch, which goes with the pending requests and is
  // freed when they complete (abandon does nothing once all completed).
  give_up();
}

void MpiWork::give_up() {
  for (const MPI_Request request : requests_)
    if (request != MPI_REQUEST_NULL) comm_->left_pending();
  real::abandon(requests_, std::move(operation_.scratch));
  requests_.fill(MPI_REQUEST_NULL);
}

void MpiWork::complete() {
  try {
    if (operation_.finish) operation_.finish(statuses_[0]);
  } catch (...) {
    error_ = std::current_exception();
  }
  operation_.scratch.clear();
  done_ = true;
}

void MpiWork::wait() {
  std::lock_guard lock(mutex_);
  if (!done_) {
    try {
      const auto deadline = operation_.deadline.value_or(Clock::now() + comm_->spec().timeout);
      if (!poll_until(requests_, deadline, statuses_.data()))
        comm_->timed_out(operation_.name(), operation_.peer);
      complete();
    } catch (...) {
      // A timeout or an MPI error leaves requests pending: give them up, with their scratch.
      give_up();
      error_ = std::current_exception();
      done_ = true;
    }
  }
  if (error_) std::rethrow_exception(error_);
}

bool MpiWork::is_completed() {
  std::lock_guard lock(mutex_);
  if (done_) return true;
  bool finished = false;
  try {
    finished = test_once(requests_, statuses_.data());
  } catch (...) {
    error_ = std::current_exception();
    done_ = true;
    return true;
  }
  if (finished) complete();
  return finished;
}

void CollectiveWork::complete() {
  try {
    if (collective_->error) std::rethrow_exception(collective_->error);
    if (finish_) finish_(collective_->status);
  } catch (...) {
    error_ = std::current_exception();
  }
  collective_->scratch.clear();
  done_ = true;
}

void CollectiveWork::wait() {
  // A collective that has waited this long asks the store, now and then, whether a member gave it
  // up at its timeout (this rank then arrived late and the call can never complete).
  constexpr auto ask_after = std::chrono::milliseconds(500);
  std::lock_guard lock(mutex_);
  const Collective& c = *collective_;
  try {
    for (auto ask = Clock::now() + ask_after; !done_; ask = Clock::now() + ask_after) {
      if (comm_->sequence().wait(c, std::min(ask, c.deadline))) {
        complete();
      } else {
        if (Clock::now() >= c.deadline) comm_->timed_out(name(), -1, c.index);
        comm_->throw_if_given_up(name(), c.index);
      }
    }
  } catch (...) {
    error_ = std::current_exception();
    done_ = true;
  }
  if (error_) std::rethrow_exception(error_);
}

void CollectiveWork::wait_for(std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  {
    std::lock_guard lock(mutex_);
    if (!done_ && until < collective_->deadline) {
      if (comm_->sequence().wait(*collective_, until)) {
        complete();
      } else {  // failed on this rank, as a timeout of the group's leaves it
        comm_->give_up(name(), collective_->index);
        try {
          wait_expired(timeout);
        } catch (...) {
          error_ = std::current_exception();
          done_ = true;
        }
      }
    }
  }
  wait();
}

bool CollectiveWork::is_completed() {
  std::lock_guard lock(mutex_);
  if (done_) return true;
  if (!comm_->sequence().advance(*collective_)) return false;
  complete();
  return true;
}

}  // namespace dist::real
