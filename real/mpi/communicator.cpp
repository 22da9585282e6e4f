// MpiComm: the communicator's lifetime, and the timeout path shared by collectives and p2p.
#include "real/mpi/communicator.hpp"

#include "core/group_text.hpp"
#include "core/store/given_up.hpp"
#include "core/store/roll_call.hpp"
#include "dist/errors.hpp"

namespace dist::real {

MpiComm::MpiComm(MpiGroupSpec spec)
    : spec_(std::move(spec)), sequence_(spec_.comm, spec_.global_ranks) {
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
  const bool pending = sequence_.give_up(std::make_exception_ptr(
      BackendError(where("a collective") + ": the group was destroyed before it completed")));
  auto lock = mpi_lock();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || !usable() || pending || left_pending_.load()) return;
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

void MpiComm::retire(const std::string& operation) {
  {
    std::lock_guard lock(mutex_);
    if (unusable_after_.empty()) unusable_after_ = operation;
    unusable_.store(true, std::memory_order_release);
  }
  try {
    throw_unusable(operation);
  } catch (...) {
    sequence_.give_up(std::current_exception());
  }
}

void MpiComm::throw_if_given_up(const std::string& operation, std::uint64_t index) {
  if (!spec_.store) return;
  const int by = core::given_up_by(*spec_.store, spec_.prefix, index);
  if (by < 0) return;
  retire(operation);
  throw BackendError(
      where(operation) + ": " +
      core::given_up_reason(by, "before this rank arrived; MPI cannot cancel a collective"));
}

void MpiComm::timed_out(const std::string& operation, int peer, std::uint64_t index) {
  give_up(operation, index);
  // A collective's timeout names nobody here: the call layer above diagnoses it with the other
  // ranks (core/calls/diagnosis.hpp).
  auto absent = core::name_absentees(peer);
  throw TimeoutError(where(operation) + " timed out after " +
                         std::to_string(spec_.timeout.count()) + " ms: " + absent.phrase,
                     std::move(absent.ranks));
}

void MpiComm::give_up(const std::string& operation, std::uint64_t index) {
  retire(operation);
  if (spec_.store)
    core::record_given_up(*spec_.store, spec_.prefix, index,
                          spec_.global_ranks[static_cast<std::size_t>(spec_.rank)]);
}

}  // namespace dist::real
