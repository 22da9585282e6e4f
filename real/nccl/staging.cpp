// Staging: stream-ordered device memory and the host <-> device copies of one operation.
// A pageable host -> device copy may wait for the stream, so the stream is first drained with
// the deadline (Communicator::wait_idle): no copy can block on an operation that never ends.
#include "real/nccl/staging.hpp"

#include "real/nccl/errors.hpp"

namespace dist::real {

Staging::Staging(std::shared_ptr<Communicator> comm, std::string operation)
    : comm_(std::move(comm)), operation_(std::move(operation)) {}

Staging::~Staging() {
  free_in_order(memory_, comm_->stream());
}

void* Staging::allocate(std::size_t bytes) {
  void* p = nullptr;
  check_cuda(cudaMallocAsync(&p, bytes == 0 ? 1 : bytes, comm_->stream()),
             operation_ + ": allocating " + std::to_string(bytes) + " bytes of staging memory");
  memory_.push_back(p);
  return p;
}

void* Staging::stage_in(const core::Buf& b) {
  if (!stream_idle_) {
    comm_->wait_idle(operation_ + " (waiting for earlier operations before staging host data)");
    stream_idle_ = true;
  }
  void* p = allocate(b.bytes());
  if (b.count > 0)
    check_cuda(cudaMemcpyAsync(p, b.data, b.bytes(), cudaMemcpyHostToDevice, comm_->stream()),
               operation_ + ": copying host data to the device");
  return p;
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
  auto work = std::make_shared<NcclWork>(comm_, operation_, std::move(copies_), std::move(memory_));
  copies_.clear();
  memory_.clear();
  return Work(std::move(work));
}

}  // namespace dist::real
