// GlooBackend's send and recv: an unbound buffer posted to the peer under a slot made of the tag
// and a per-(peer, tag) message count, so the n-th send matches the n-th recv. The Work waits
// for it with the group's timeout (like torch, a gloo p2p Work completes in wait()).
#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <exception>
#include <mutex>

#include "core/work_state.hpp"
#include "real/gloo/backend.hpp"

namespace dist::real {

namespace {
// Top byte of p2p slots; gloo's collectives use small prefixes, so they never collide.
constexpr std::uint64_t p2p_slot_prefix = std::uint64_t{0xD1} << 56;

class P2PWork final : public detail::WorkState {
 public:
  P2PWork(std::shared_ptr<::gloo::Context> context,
          std::unique_ptr<::gloo::transport::UnboundBuffer> buffer, bool is_send,
          std::chrono::milliseconds timeout, std::shared_ptr<const ErrorMapper> errors,
          std::string operation, int peer)
      : context_(std::move(context)),
        buffer_(std::move(buffer)),
        is_send_(is_send),
        timeout_(timeout),
        errors_(std::move(errors)),
        operation_(std::move(operation)),
        peer_(peer) {}

  void wait() override {
    std::lock_guard lock(mutex_);
    if (!done_) {
      try {
        if (is_send_) buffer_->waitSend(timeout_);
        else buffer_->waitRecv(timeout_);
      } catch (...) {
        try {
          errors_->rethrow_current(operation_, peer_, context_.get());
        } catch (...) {
          error_ = std::current_exception();
        }
      }
      done_ = true;
    }
    if (error_) std::rethrow_exception(error_);
  }

  bool is_completed() override {
    std::lock_guard lock(mutex_);
    return done_;
  }

 private:
  std::shared_ptr<::gloo::Context> context_;  // the transport the buffer lives on
  std::unique_ptr<::gloo::transport::UnboundBuffer> buffer_;
  bool is_send_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<const ErrorMapper> errors_;
  std::string operation_;
  int peer_;
  std::mutex mutex_;
  bool done_ = false;
  std::exception_ptr error_;
};

char empty_message = 0;  // the address gloo gets for a message of no elements
}  // namespace

std::uint64_t GlooBackend::next_p2p_slot(std::map<std::pair<int, int>, std::uint32_t>& counters,
                                         int peer, int tag) {
  const std::uint32_t n = counters[{peer, tag}]++;
  return p2p_slot_prefix | (std::uint64_t{static_cast<std::uint32_t>(tag)} << 24) |
         (std::uint64_t{n} & 0xFFFFFF);
}

Work GlooBackend::send(core::Buf data, int dst, int tag) {
  const int peer = spec_.global_ranks[static_cast<std::size_t>(dst)];
  const std::string what =
      "send to rank " + std::to_string(peer) + " (tag " + std::to_string(tag) + ")";
  try {
    auto buffer =
        context_->createUnboundBuffer(data.count ? data.data : &empty_message, data.bytes());
    buffer->send(dst, next_p2p_slot(sends_, dst, tag));
    return Work(std::make_shared<P2PWork>(context_, std::move(buffer), true, spec_.timeout, errors_,
                                          what, peer));
  } catch (...) {
    errors_->rethrow_current(what, peer, context_.get());
  }
}

Work GlooBackend::recv(core::Buf data, int src, int tag) {
  const int peer = spec_.global_ranks[static_cast<std::size_t>(src)];
  const std::string what =
      "recv from rank " + std::to_string(peer) + " (tag " + std::to_string(tag) + ")";
  try {
    auto buffer =
        context_->createUnboundBuffer(data.count ? data.data : &empty_message, data.bytes());
    buffer->recv(src, next_p2p_slot(recvs_, src, tag));
    return Work(std::make_shared<P2PWork>(context_, std::move(buffer), false, spec_.timeout,
                                          errors_, what, peer));
  } catch (...) {
    errors_->rethrow_current(what, peer, context_.get());
  }
}

}  // namespace dist::real
