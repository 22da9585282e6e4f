// MpiComm: the communicator's lifetime, and the timeout path shared by collectives and p2p.
#include "real/mpi/communicator.hpp"

#include "core/group_text.hpp"
#include "core/store/roll_call.hpp"
#include "dist/errors.hpp"

namespace dist::real {

MpiComm::MpiComm(MpiGroupSpec spec) : spec_(std::move(spec)) {
  auto lock = mpi_lock();
  check_mpi(MPI_Comm_set_errhandler(spec_.comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_dup(spec_.comm, &acks_), "MPI_Comm_dup");
  const int code = MPI_Comm_set_errhandler(acks_, MPI_ERRORS_RETURN);
  if (code != MPI_SUCCESS) {
    (void)MPI_Comm_free(&acks_);
    throw_mpi_error(code, "MPI_Comm_set_errhandler");
  }
}

MpiComm::~MpiComm() {
  auto lock = mpi_lock();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || !usable()) return;
  if (acks_ != MPI_COMM_NULL) (void)MPI_Comm_free(&acks_);
  if (spec_.comm != MPI_COMM_NULL) (void)MPI_Comm_free(&spec_.comm);
}

std::string MpiComm::where(const std::string& operation) const {
  return "mpi " + operation + " on the " + core::group_text(spec_.global_ranks);
}

void MpiComm::throw_unusable(const std::string& operation) const {
  std::lock_guard lock(mutex_);
  throw BackendError(where(operation) + ": the group is unusable after the timeout of " +
                     unusable_after_ + " (MPI cannot cancel it); create a new process group");
}

void MpiComm::wait(MPI_Request& request, Clock::time_point deadline, const std::string& operation) {
  if (!poll_until(request, deadline)) timed_out(operation, -1);
}

void MpiComm::timed_out(const std::string& operation, int peer) {
  {
    std::lock_guard lock(mutex_);
    if (unusable_after_.empty()) unusable_after_ = operation;
    unusable_.store(true, std::memory_order_release);
  }
  // A collective's timeout names nobody here: the call layer above diagnoses it with the other
  // ranks (core/calls/diagnosis.hpp).
  auto absent = core::name_absentees(peer);
  throw TimeoutError(where(operation) + " timed out after " +
                         std::to_string(spec_.timeout.count()) + " ms: " + absent.phrase,
                     std::move(absent.ranks));
}

}  // namespace dist::real
