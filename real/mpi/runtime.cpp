// The process-wide MPI state behind runtime.hpp: initialisation, the lock, polling, and the exit
// handler that finalises MPI unless a request given up after a timeout is still pending.
#include "real/mpi/runtime.hpp"

#include <algorithm>
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
    Requests requests;
    Scratch scratch;  // freed with the last of them
    bool collective = false;
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

// Tests every abandoned request once; returns how many messages (not collectives) are still
// pending. Under the lock.
std::size_t drain_abandoned(State& s) {
  std::erase_if(s.abandoned, [](State::Abandoned& a) {
    bool all = true;
    for (MPI_Request& request : a.requests) {
      if (request == MPI_REQUEST_NULL) continue;
      int done = 0;
      if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) request = MPI_REQUEST_NULL;
      all = all && request == MPI_REQUEST_NULL;
    }
    return all;
  });
  return static_cast<std::size_t>(
      std::count_if(s.abandoned.begin(), s.abandoned.end(),
                    [](const State::Abandoned& a) { return !a.collective; }));
}

bool pending(const Requests& requests) {
  for (const MPI_Request request : requests)
    if (request != MPI_REQUEST_NULL) return true;
  return false;
}

void finalize_at_exit() {
  State& s = state();
  std::unique_lock lock(s.mutex);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  const auto deadline = Clock::now() + exit_grace;
  std::size_t messages = 0;
  while ((messages = drain_abandoned(s)) > 0 && Clock::now() < deadline) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.lock();
  }
  if (messages > 0) {
    std::fprintf(stderr,
                 "dist: not calling MPI_Finalize: %zu MPI message(s) given up after a timeout "
                 "never completed (mpirun may report this process as having exited early)\n",
                 messages);
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
  throw BackendError("mpi " + where + " failed: " +
                         (length > 0 ? std::string(text, static_cast<std::size_t>(length))
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
    throw BackendError(
        "init_process_group(mpi): MPI was already finalized in this process; MPI "
        "cannot be initialised twice");
  if (initialised) return;
  int provided = 0;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  // Open MPI reports a failed request of a non-blocking collective (a count mismatch's
  // MPI_ERR_TRUNCATE) on MPI_COMM_WORLD, whatever communicator the request is on: the error must
  // come back as a code, not abort the job. (Only when dist initialised MPI: a program that did
  // keeps its own handler.)
  check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  std::atexit(finalize_at_exit);
}

bool test_once(std::span<MPI_Request> requests, MPI_Status* statuses) {
  bool all = true;
  auto lock = mpi_lock();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;  // done: its status stays as it was filled
    MPI_Status* status = statuses == MPI_STATUS_IGNORE ? MPI_STATUS_IGNORE : statuses + i;
    int done = 0;
    const int code = MPI_Test(&requests[i], &done, status);
    if (code == MPI_SUCCESS) {
      all = all && done != 0;
      continue;
    }
    int error_class = 0;
    MPI_Error_class(code, &error_class);
    if (status == MPI_STATUS_IGNORE || error_class != MPI_ERR_TRUNCATE)
      throw_mpi_error(code, "MPI_Test");
    status->MPI_ERROR = MPI_ERR_TRUNCATE;  // MPI completed (and freed) the request
    requests[i] = MPI_REQUEST_NULL;
  }
  return all;
}

bool poll_until(std::span<MPI_Request> requests, Clock::time_point deadline, MPI_Status* statuses) {
  const auto start = Clock::now();
  for (;;) {
    if (test_once(requests, statuses)) return true;
    if (Clock::now() >= deadline) return false;
    poll_pause(start);
  }
}

void poll_pause(Clock::time_point start) {
  const auto elapsed = Clock::now() - start;
  if (elapsed < spin_period) return;  // a small operation is done within microseconds
  if (elapsed < busy_period) std::this_thread::yield();
  else std::this_thread::sleep_for(idle_poll);
}

void abandon(const Requests& requests, Scratch scratch, bool collective) {
  if (!pending(requests)) return;
  auto lock = mpi_lock();
  drain_abandoned(state());  // frees what completed since
  state().abandoned.push_back({requests, std::move(scratch), collective});
}

}  // namespace dist::real
