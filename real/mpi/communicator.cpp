// MpiComm: the communicator's lifetime, and the timeout path shared by collectives and p2p.
#include "real/mpi/communicator.hpp"

#include <sstream>

#include "core/group_text.hpp"
#include "core/store/roll_call.hpp"
#include "dist/errors.hpp"

namespace dist::real {

namespace {
// How long the store may take to record or tell that a member gave up a collective.
constexpr std::chrono::milliseconds given_up_wait{1000};
}  // namespace

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

std::string MpiComm::given_up_key() const { return spec_.prefix + "/given_up"; }

void MpiComm::throw_if_given_up(const std::string& operation, std::uint64_t index) {
  if (!spec_.store) return;
  std::uint64_t first = 0;
  int by = -1;
  try {
    const std::string key = given_up_key();
    if (!spec_.store->check({key})) return;
    std::istringstream text(core::to_string(spec_.store->get(key, given_up_wait)));
    text >> first >> by;
  } catch (const dist::Error&) {  // the store is gone or slow: the deadline decides
    return;
  }
  if (first == 0 || first > index) return;
  retire(operation);
  throw BackendError(where(operation) + ": rank " + std::to_string(by) +
                     " gave up this collective at its timeout, before this rank arrived; the "
                     "group is unusable (MPI cannot cancel a collective); create a new process "
                     "group");
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
  if (index > 0 && spec_.store) {
    try {
      const int me = spec_.global_ranks[static_cast<std::size_t>(spec_.rank)];
      spec_.store->set(given_up_key(),
                       core::to_bytes(std::to_string(index) + " " + std::to_string(me)),
                       given_up_wait);
    } catch (const dist::Error&) {  // the store is gone: a late peer times out instead
    }
  }
}

}  // namespace dist::real
