// The Work of an mpi operation: an MPI request polled against its deadline in wait(), then a
// finishing step on the host (a mean's division). A collective's deadline runs from its start;
// a send's or recv's from the wait, as gloo's. A Work dropped before completion gives its
// request up (runtime.hpp, abandon) instead of leaking it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/work_state.hpp"
#include "real/mpi/communicator.hpp"

namespace dist::real {

// A step run on the waiting thread after the request completed (status: a receive's size).
using Finish = std::function<void(const MPI_Status&)>;

// What a Work needs to finish an operation and, on an error, to name it (the name is built only
// then: the common path makes no strings).
struct MpiOperation {
  const char* kind = "";                      // "all_reduce", ..., or "send to" / "recv from"
  std::uint64_t sequence = 0;                 // a collective's number in its group
  int peer = -1;                              // the world rank a p2p operation talks to
  int tag = 0;                                // a p2p operation's tag
  std::optional<Clock::time_point> deadline;  // none: the group's timeout from wait()
  Finish finish;                              // after completion, on the waiting thread
  std::vector<std::byte> scratch;             // memory MPI uses until completion

  // "all_reduce #3", "send to rank 1 (tag 0)"
  std::string name() const;
};

class MpiWork final : public detail::WorkState {
 public:
  MpiWork(std::shared_ptr<MpiComm> comm, MPI_Request request, MpiOperation operation);
  ~MpiWork() override;

  void wait() override;
  bool is_completed() override;

 private:
  void complete();  // runs finish once the request is done; records an error

  std::shared_ptr<MpiComm> comm_;
  MPI_Request request_;
  MpiOperation operation_;
  std::mutex mutex_;
  MPI_Status status_{};  // of the completed request (a receive's size)
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace dist::real
