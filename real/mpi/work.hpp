// The Works of mpi operations. MpiWork: a send's or recv's MPI requests (the message and its
// acknowledgement) polled against the deadline in wait(), then a finishing step on the host (the
// p2p check); its deadline runs from the wait, as gloo's. A p2p Work dropped before completion
// gives its requests up (runtime.hpp, abandon) instead of leaking them. CollectiveWork: a
// collective of the group's sequence (sequence.hpp), moved along until done or its deadline (from
// its start), then its finishing step (the copy out, a mean's division); a dropped one is carried
// through by the sequence.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/work_state.hpp"
#include "real/mpi/communicator.hpp"
#include "real/mpi/scratch.hpp"
#include "real/mpi/sequence.hpp"

namespace dist::real {

// A step run on the waiting thread after the requests completed (status: the first request's, a
// receive's size).
using Finish = std::function<void(const MPI_Status&)>;

// What a Work needs to finish an operation and, on an error, to name it (the name is built only
// then: the common path makes no strings).
struct MpiOperation {
  const char* kind = "";                      // "all_reduce", ..., or "send to" / "recv from"
  int peer = -1;                              // the world rank a p2p operation talks to
  int tag = 0;                                // a p2p operation's tag
  bool receive = false;                       // a recv: its first request's status names the sender
  std::optional<Clock::time_point> deadline;  // none: the group's timeout from wait()
  Finish finish;                              // after completion, on the waiting thread
  Scratch scratch;                            // memory MPI uses until completion

  // "all_reduce #3", "send to rank 1 (tag 0)"
  std::string name() const;
};

class MpiWork final : public detail::WorkState {
 public:
  MpiWork(std::shared_ptr<MpiComm> comm, const Requests& requests, MpiOperation operation);
  ~MpiWork() override;

  void wait() override;
  bool is_completed() override;
  // A completed recv's sender, as MPI reported it (any_source included).
  int source() const override { return operation_.receive ? statuses_[0].MPI_SOURCE : -1; }

 private:
  void complete();  // runs finish once the requests are done; records an error
  void give_up();   // abandons the pending requests with the scratch

  std::shared_ptr<MpiComm> comm_;
  Requests requests_;
  MpiOperation operation_;
  std::mutex mutex_;
  std::array<MPI_Status, std::tuple_size_v<Requests>> statuses_{};  // of the completed requests
  bool done_ = false;
  std::exception_ptr error_;
};

class CollectiveWork final : public detail::WorkState {
 public:
  CollectiveWork(std::shared_ptr<MpiComm> comm, std::shared_ptr<Collective> collective,
                 Finish finish)
      : comm_(std::move(comm)), collective_(std::move(collective)), finish_(std::move(finish)) {}

  void wait() override;
  // A timeout shorter than the collective's deadline leaves it going on (WaitTimeout).
  void wait_for(std::chrono::milliseconds timeout) override;
  bool is_completed() override;

 private:
  void complete();  // once the sequence is done with it: its error, or the finishing step
  std::string name() const { return std::string(core::to_string(collective_->call.kind)); }

  std::shared_ptr<MpiComm> comm_;
  std::shared_ptr<Collective> collective_;
  Finish finish_;
  std::mutex mutex_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace dist::real
