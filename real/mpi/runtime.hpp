// The MPI library of this process: initialised once (asking for MPI_THREAD_MULTIPLE), every call
// made under one lock (so any thread level the program chose is safe), requests polled against
// deadlines, MPI error codes turned into BackendError, and MPI_Finalize at exit.
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "real/mpi/scratch.hpp"

namespace dist::real {

using Clock = std::chrono::steady_clock;

// Initialises MPI unless the program (or an earlier group) did; BackendError once it is finalised.
// When dist initialised it, MPI_Finalize runs at exit (see abandon()).
void ensure_mpi();

// The lock every MPI call of dist is made under.
std::unique_lock<std::mutex> mpi_lock();

// BackendError("mpi <where> failed: <MPI's error string>", code).
[[noreturn]] void throw_mpi_error(int code, const std::string& where);
// Throws it unless `code` is MPI_SUCCESS (hot paths test the code first, so as to build `where`
// only on an error).
inline void check_mpi(int code, const std::string& where) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, where);
}

// The requests of one operation: a collective's one, or a send's or recv's message and its
// acknowledgement; MPI_REQUEST_NULL where unused or completed.
using Requests = std::array<MPI_Request, 2>;

// Polls `requests` (under the lock) until all completed or `deadline` passes; true when all did
// (they are then MPI_REQUEST_NULL). MPI progresses non-blocking collectives only inside its calls,
// so it polls without pause for 50 µs, then yielding the CPU between polls up to 200 ms, then
// every 200 µs.
// With `statuses` (one per request), a receive that overflowed its buffer completes too, with its
// status' MPI_ERROR set to MPI_ERR_TRUNCATE (p2p names the sizes); any other MPI error throws.
bool poll_until(std::span<MPI_Request> requests, Clock::time_point deadline,
                MPI_Status* statuses = MPI_STATUS_IGNORE);
// The pause between two polls of an operation started at `start`, as poll_until paces them.
void poll_pause(Clock::time_point start);

// One MPI_Test of each pending request (under the lock), with poll_until's handling of `statuses`;
// true when none is pending.
bool test_once(std::span<MPI_Request> requests, MPI_Status* statuses = MPI_STATUS_IGNORE);
inline bool poll_until(MPI_Request& request, Clock::time_point deadline,
                       MPI_Status* status = MPI_STATUS_IGNORE) {
  return poll_until(std::span(&request, 1), deadline, status);
}

// Hands over requests that were given up (a timeout, a Work dropped before completion), with the
// scratch memory MPI may still read or write (freed once they all completed). At exit dist waits
// up to 2 s for given-up messages (send and recv); if some never complete, it skips MPI_Finalize
// (which would wait for them) and says so on stderr. A given-up `collective` is not waited for:
// its peers may never join it (they gave it up first), and MPI_Finalize leaves it be.
void abandon(const Requests& requests, Scratch scratch = {}, bool collective = false);
inline void abandon(MPI_Request request, Scratch scratch = {}, bool collective = false) {
  abandon(Requests{request, MPI_REQUEST_NULL}, std::move(scratch), collective);
}

}  // namespace dist::real
