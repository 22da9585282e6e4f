// The process-wide MPI state behind runtime.hpp: initialisation, the lock, polling, and the exit
// handler that finalises MPI unless a request given up after a timeout is still pending.
#include "real/mpi/runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "dist/errors.hpp"

namespace dist::real {

namespace {

struct State {
  std::mutex mutex;
  struct Abandoned {
    MPI_Request request;
    std::vector<std::byte> scratch;
  };
  std::vector<Abandoned> abandoned;
};

State& state() {
  static State s;  // constructed before the exit handler is registered, so it outlives it
  return s;
}

constexpr auto spin_period = std::chrono::microseconds(50);
constexpr auto busy_period = std::chrono::milliseconds(200);
constexpr auto idle_poll = std::chrono::microseconds(200);
constexpr auto exit_grace = std::chrono::seconds(2);

// Tests every abandoned request once; returns how many are still pending. Under the lock.
std::size_t drain_abandoned(State& s) {
  std::erase_if(s.abandoned, [](State::Abandoned& a) {
    int done = 0;
    return MPI_Test(&a.request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done != 0;
  });
  return s.abandoned.size();
}

void finalize_at_exit() {
  State& s = state();
  std::unique_lock lock(s.mutex);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  const auto deadline = Clock::now() + exit_grace;
  while (drain_abandoned(s) > 0 && Clock::now() < deadline) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.lock();
  }
  if (!s.abandoned.empty()) {
    std::fprintf(stderr,
                 "dist: not calling MPI_Finalize: %zu MPI operation(s) given up after a timeout "
                 "never completed (mpirun may report this process as having exited early)\n",
                 s.abandoned.size());
    return;
  }
  MPI_Finalize();
}

}  // namespace

std::unique_lock<std::mutex> mpi_lock() { return std::unique_lock(state().mutex); }

void throw_mpi_error(int code, const std::string& where) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw BackendError("mpi " + where + " failed: " + (length > 0 ? std::string(text, static_cast<std::size_t>(length))
                                                                  : "MPI error " + std::to_string(code)),
                     code);
}

void ensure_mpi() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  int initialised = 0;
  int finalized = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalized);
  if (finalized)
    throw BackendError("init_process_group(mpi): MPI was already finalized in this process; MPI "
                       "cannot be initialised twice");
  if (initialised) return;
  int provided = 0;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  std::atexit(finalize_at_exit);
}

bool test_once(MPI_Request& request, MPI_Status* status) {
  int done = 0;
  auto lock = mpi_lock();
  const int code = MPI_Test(&request, &done, status);
  if (code == MPI_SUCCESS) return done != 0;
  int error_class = 0;
  MPI_Error_class(code, &error_class);
  if (status == MPI_STATUS_IGNORE || error_class != MPI_ERR_TRUNCATE)
    throw_mpi_error(code, "MPI_Test");
  status->MPI_ERROR = MPI_ERR_TRUNCATE;  // MPI completed (and freed) the request
  request = MPI_REQUEST_NULL;
  return true;
}

bool poll_until(MPI_Request& request, Clock::time_point deadline, MPI_Status* status) {
  const auto start = Clock::now();
  for (;;) {
    if (test_once(request, status)) return true;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    if (now - start < spin_period) continue;  // a small operation is done within microseconds
    if (now - start < busy_period) std::this_thread::yield();
    else std::this_thread::sleep_for(idle_poll);
  }
}

void abandon(MPI_Request request, std::vector<std::byte> scratch) {
  if (request == MPI_REQUEST_NULL) return;
  auto lock = mpi_lock();
  drain_abandoned(state());  // frees what completed since
  state().abandoned.push_back({request, std::move(scratch)});
}

}  // namespace dist::real
