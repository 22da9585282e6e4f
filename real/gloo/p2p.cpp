// GlooBackend's send and recv. Both sides first exchange a small header (element count and dtype)
// under slots made of the tag and a per-(peer, tag) message count; the payload follows only when
// the headers agree, else both ranks raise InvalidArgument naming both sides and send nothing.
#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <exception>
#include <mutex>

#include "core/work_state.hpp"
#include "dist/errors.hpp"
#include "real/gloo/backend.hpp"

namespace dist::real {

namespace {
// Top bytes of p2p slots (payload, sender's header, receiver's header); gloo's collectives use
// small prefixes, so they never collide.
constexpr std::uint64_t payload_prefix = std::uint64_t{0xD1} << 56;
constexpr std::uint64_t send_header_prefix = std::uint64_t{0xD2} << 56;
constexpr std::uint64_t recv_header_prefix = std::uint64_t{0xD3} << 56;

// What each side of a message says about it.
struct Header {
  std::uint64_t count = 0;
  std::uint32_t dtype = 0;
  std::uint32_t pad = 0;
  bool operator==(const Header&) const = default;
};

std::string describe(const Header& h) {
  return std::to_string(h.count) + " " + std::string(to_string(static_cast<DType>(h.dtype))) +
         " element(s)";
}

class P2PWork final : public detail::WorkState {
 public:
  P2PWork(std::shared_ptr<::gloo::Context> context, core::Buf data, bool is_send, int peer_in_group,
          std::uint64_t slot, std::chrono::milliseconds timeout,
          std::shared_ptr<const ErrorMapper> errors, std::string operation, int peer, int self)
      : context_(std::move(context)),
        data_(data),
        is_send_(is_send),
        peer_in_group_(peer_in_group),
        slot_(slot),
        timeout_(timeout),
        errors_(std::move(errors)),
        operation_(std::move(operation)),
        peer_(peer),
        self_(self) {
    mine_ = Header{.count = data.count, .dtype = static_cast<std::uint32_t>(data.dtype)};
    const std::uint64_t out = is_send ? send_header_prefix : recv_header_prefix;
    const std::uint64_t in = is_send ? recv_header_prefix : send_header_prefix;
    header_out_ = context_->createUnboundBuffer(&mine_, sizeof(Header));
    header_in_ = context_->createUnboundBuffer(&theirs_, sizeof(Header));
    header_in_->recv(peer_in_group_, in | slot_);
    header_out_->send(peer_in_group_, out | slot_);
  }

  void wait() override {
    std::lock_guard lock(mutex_);
    if (!done_) {
      try {
        exchange();
      } catch (const InvalidArgument&) {
        error_ = std::current_exception();
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
  // The headers, then (when they agree) the payload; each wait bounded by the timeout.
  void exchange() {
    header_in_->waitRecv(timeout_);
    header_out_->waitSend(timeout_);
    if (!(theirs_ == mine_)) {
      const std::string peer_text = "rank " + std::to_string(peer_);
      const std::string self_text = "rank " + std::to_string(self_);
      throw InvalidArgument("gloo " + operation_ + " on the " + errors_->group_text() +
                            ": the sender (" + (is_send_ ? self_text : peer_text) + ") sends " +
                            describe(is_send_ ? mine_ : theirs_) + ", the receiver (" +
                            (is_send_ ? peer_text : self_text) + ") expects " +
                            describe(is_send_ ? theirs_ : mine_) + "; nothing was transferred");
    }
    if (data_.count == 0) return;  // both sides agree there is nothing to move
    payload_ = context_->createUnboundBuffer(data_.data, data_.bytes());
    if (is_send_) {
      payload_->send(peer_in_group_, payload_prefix | slot_);
      payload_->waitSend(timeout_);
    } else {
      payload_->recv(peer_in_group_, payload_prefix | slot_);
      payload_->waitRecv(timeout_);
    }
  }

  std::shared_ptr<::gloo::Context> context_;  // the transport the buffers live on
  core::Buf data_;
  bool is_send_;
  int peer_in_group_;
  std::uint64_t slot_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<const ErrorMapper> errors_;
  std::string operation_;
  int peer_;  // world ranks: the other side and this one
  int self_;
  Header mine_;
  Header theirs_;
  std::unique_ptr<::gloo::transport::UnboundBuffer> header_out_;
  std::unique_ptr<::gloo::transport::UnboundBuffer> header_in_;
  std::unique_ptr<::gloo::transport::UnboundBuffer> payload_;
  std::mutex mutex_;
  bool done_ = false;
  std::exception_ptr error_;
};
}  // namespace

std::uint64_t GlooBackend::next_p2p_slot(std::map<std::pair<int, int>, std::uint32_t>& counters,
                                         int peer, int tag) {
  const std::uint32_t n = counters[{peer, tag}]++;
  return (std::uint64_t{static_cast<std::uint32_t>(tag)} << 24) | (std::uint64_t{n} & 0xFFFFFF);
}

Work GlooBackend::p2p(core::Buf data, int peer_in_group, int tag, bool is_send) {
  const int peer = spec_.global_ranks[static_cast<std::size_t>(peer_in_group)];
  const std::string what = std::string(is_send ? "send to" : "recv from") + " rank " +
                           std::to_string(peer) + " (tag " + std::to_string(tag) + ")";
  try {
    const std::uint64_t slot = next_p2p_slot(is_send ? sends_ : recvs_, peer_in_group, tag);
    return Work(std::make_shared<P2PWork>(
        context_, data, is_send, peer_in_group, slot, spec_.timeout, errors_, what, peer,
        spec_.global_ranks[static_cast<std::size_t>(spec_.rank)]));
  } catch (...) {
    errors_->rethrow_current(what, peer, context_.get());
  }
}

Work GlooBackend::send(core::Buf data, int dst, int tag) { return p2p(data, dst, tag, true); }

Work GlooBackend::recv(core::Buf data, int src, int tag) { return p2p(data, src, tag, false); }

}  // namespace dist::real
