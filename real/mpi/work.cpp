// MpiWork: completion by polling against the deadline (MpiComm::timed_out on a timeout) or by one
// MPI_Test of each pending request.
#include "real/mpi/work.hpp"

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
  abandon(requests_, std::move(operation_.scratch));
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
      abandon(requests_, std::move(operation_.scratch));
      requests_.fill(MPI_REQUEST_NULL);
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

}  // namespace dist::real
