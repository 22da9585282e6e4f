// Staging: stream-ordered device memory and the host <-> device copies of one operation.
// A pageable host -> device copy may wait for the stream, so the stream is first drained with
// the deadline (Communicator::wait_idle): no copy can block on an operation that never ends.
#include "real/nccl/staging.hpp"

#include "real/nccl/errors.hpp"

namespace dist::real {

Staging::Staging(std::shared_ptr<Communicator> comm, Operation op)
    : comm_(std::move(comm)), op_(std::move(op)) {}

Staging::~Staging() {
  free_in_order(memory_, comm_->stream());
}

void* Staging::allocate(std::size_t bytes) {
  void* p = nullptr;
  check_cuda(cudaMallocAsync(&p, bytes == 0 ? 1 : bytes, comm_->stream()), [&] {
    return op_.name + ": allocating " + std::to_string(bytes) + " bytes of staging memory";
  });
  memory_.push_back(p);
  return p;
}

void* Staging::stage_in(const core::ConstBuf& b) {
  if (!stream_idle_) {
    // What it waits for are earlier operations: a p2p call's peer is not to blame for them.
    Operation earlier = op_.with(" (waiting for earlier operations before staging host data)");
    earlier.peer = -1;
    comm_->wait_idle(earlier);
    stream_idle_ = true;
  }
  void* p = allocate(b.bytes());
  if (b.count > 0)
    check_cuda(cudaMemcpyAsync(p, b.data, b.bytes(), cudaMemcpyHostToDevice, comm_->stream()),
               [&] { return op_.name + ": copying host data to the device"; });
  return p;
}

const void* Staging::input(const core::ConstBuf& b) {
  if (b.device.is_cuda()) return b.data;
  return stage_in(b);
}

void* Staging::input(const core::Buf& b) {
  if (b.device.is_cuda()) return b.data;
  return stage_in(b);
}

void* Staging::output(const core::Buf& b, bool initialise) {
  if (b.device.is_cuda()) return b.data;
  void* p = initialise ? stage_in(b) : allocate(b.bytes());
  if (b.count > 0) copies_.push_back({b.data, p, b.bytes()});
  return p;
}

void* Staging::scratch(std::size_t bytes) { return allocate(bytes); }

Work Staging::finish() {
  auto work = std::make_shared<NcclWork>(comm_, op_, std::move(copies_), std::move(memory_));
  copies_.clear();
  memory_.clear();
  return Work(std::move(work));
}

}  // namespace dist::real
