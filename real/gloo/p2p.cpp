// GlooBackend's send and recv. A message is the sender's core::P2PHeader (count, dtype) followed
// by its payload, cut into pieces of fixed capacities (p2p_pieces.hpp) posted under one slot made
// of the tag and a per-(peer, tag) message count, so the n-th send matches the n-th recv and the
// k-th piece the k-th piece. The receiver answers each message with its own header (the ack, under
// a second slot; the sender posts the recv of the next message's ack with each send, so a receiver
// that is ready first has answered by the time the sender waits). Everything is posted when the
// call is made, so nothing waits on the other rank's wait(): a ring of isend/irecv cannot
// deadlock. In wait() the receiver checks the sender's header
// and the sender the receiver's: a mismatch is an InvalidArgument naming both sides on both
// ranks, raised once every piece the other side posted has completed, so gloo never touches the
// caller's buffer after the call has thrown. Like torch, a gloo p2p Work completes in wait(),
// within the group's timeout counted from there.
#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "core/p2p_header.hpp"
#include "core/work_state.hpp"
#include "dist/errors.hpp"
#include "real/gloo/backend.hpp"
#include "real/gloo/p2p_pieces.hpp"

namespace dist::real {

struct GlooBackend::PostedAck {
  std::array<std::byte, core::P2PHeader::wire_size> bytes{};
  std::unique_ptr<::gloo::transport::UnboundBuffer> buffer;
};

namespace {
using Clock = std::chrono::steady_clock;
using Header = core::P2PHeader;
using UnboundBuffer = ::gloo::transport::UnboundBuffer;
using gloo_p2p::for_each_piece;

// Top bytes of p2p slots; gloo's collectives use small prefixes, so they never collide.
constexpr std::uint64_t data_prefix = std::uint64_t{0xD1} << 56;
constexpr std::uint64_t ack_prefix = std::uint64_t{0xD2} << 56;

std::size_t stream_length(const Header& h) {
  return Header::wire_size + h.count * dtype_size(h.dtype);
}

// The slot of the n-th message of a (peer, tag) pair, without its prefix.
std::uint64_t slot_of(int tag, std::uint32_t n) {
  return (std::uint64_t{static_cast<std::uint32_t>(tag)} << 24) | (std::uint64_t{n} & 0xFFFFFF);
}

// What both kinds of p2p Work share: the deadline, the error mapping, and the header check.
class P2PWork : public detail::WorkState {
 public:
  P2PWork(std::shared_ptr<::gloo::Context> context, Header mine, std::chrono::milliseconds timeout,
          std::shared_ptr<const ErrorMapper> errors, std::string operation, int peer, int me)
      : context_(std::move(context)),
        mine_(mine),
        timeout_(timeout),
        errors_(std::move(errors)),
        operation_(std::move(operation)),
        peer_(peer),
        me_(me) {}

  void wait() final { wait_for(timeout_); }
  // The transfer progresses only here: Work::wait's timeout becomes the deadline.
  void wait_for(std::chrono::milliseconds timeout) final {
    std::lock_guard lock(mutex_);
    if (!done_) {
      deadline_ = Clock::now() + std::min(timeout, timeout_);
      try {
        finish();
      } catch (const Error&) {  // ours, already worded
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

  bool is_completed() final {
    std::lock_guard lock(mutex_);
    return done_;
  }

 protected:
  virtual void finish() = 0;  // waits for the transfer and checks the headers

  // The time gloo may still wait (at least 1 ms: gloo treats 0 as "its default").
  std::chrono::milliseconds left() const {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    return std::max(ms, std::chrono::milliseconds(1));
  }
  void wait_recv(UnboundBuffer& b) const { b.waitRecv(left()); }
  void wait_send(UnboundBuffer& b) const { b.waitSend(left()); }

  // The other side's header, read from `bytes`; a message without one is a BackendError.
  Header theirs(std::span<const std::byte> bytes) const {
    const auto h = Header::decode(bytes);
    if (!h)
      throw BackendError(where() + ": rank " + std::to_string(peer_) +
                         " answered without dist's header (is another program using this gloo "
                         "context?)");
    return *h;
  }
  [[noreturn]] void mismatch(int sender, const Header& sent, int receiver,
                             const Header& expected) const {
    core::throw_p2p_mismatch(where(), sender, sent, receiver, expected);
  }

  std::shared_ptr<::gloo::Context> context_;  // the transport the buffers live on
  Header mine_;
  int peer() const { return peer_; }
  int me() const { return me_; }

 private:
  // "gloo send to rank 1 (tag 0) on the group of world ranks [0, 1]", as ErrorMapper words it.
  std::string where() const { return "gloo " + operation_ + " on the " + errors_->group_text(); }

  std::chrono::milliseconds timeout_;
  std::shared_ptr<const ErrorMapper> errors_;
  std::string operation_;
  int peer_;
  int me_;
  Clock::time_point deadline_{};
  std::mutex mutex_;
  bool done_ = false;
  std::exception_ptr error_;
};

// A send: piece 0 (the header and the payload's first bytes) from a copy, the other pieces from
// the caller's buffer; the receiver's ack arrives in `ack_`.
class SendWork final : public P2PWork {
 public:
  SendWork(std::shared_ptr<::gloo::Context> context, core::Buf data, int dst, std::uint64_t slot,
           std::shared_ptr<GlooBackend::PostedAck> ack, std::chrono::milliseconds timeout,
           std::shared_ptr<const ErrorMapper> errors, std::string operation, int peer, int me)
      : P2PWork(std::move(context), Header{.count = data.count, .dtype = data.dtype}, timeout,
                std::move(errors), std::move(operation), peer, me),
        ack_(std::move(ack)) {
    const std::size_t length = stream_length(mine_);
    for_each_piece(length, [&](int k, std::size_t start, std::size_t, std::size_t held) {
      if (k == 0) {
        first_.resize(held);
        mine_.encode(first_.data());
        if (held > Header::wire_size)
          std::memcpy(first_.data() + Header::wire_size, data.data, held - Header::wire_size);
        first_buffer_ = context_->createUnboundBuffer(first_.data(), first_.size());
        first_buffer_->send(dst, slot);
        return;
      }
      if (!body_) body_ = context_->createUnboundBuffer(data.data, data.bytes());
      body_->send(dst, slot, start - Header::wire_size, held);
      body_starts_.push_back(start);
    });
  }

 private:
  void finish() override {
    wait_recv(*ack_->buffer);
    const Header expected = theirs(ack_->bytes);
    // The pieces the receiver posted are read from the caller's buffer: wait for them even on a
    // mismatch (those it did not post are never sent).
    const std::size_t posted = std::min(stream_length(expected), stream_length(mine_));
    wait_send(*first_buffer_);
    for (const std::size_t start : body_starts_)
      if (start < posted) wait_send(*body_);
    if (expected != mine_) mismatch(me(), mine_, peer(), expected);
  }

  std::shared_ptr<GlooBackend::PostedAck> ack_;
  std::vector<std::byte> first_;
  std::unique_ptr<UnboundBuffer> first_buffer_;
  std::unique_ptr<UnboundBuffer> body_;
  std::vector<std::size_t> body_starts_;  // stream offsets of the pieces after the first
};

// A recv: every piece at its full capacity, piece 0 and a partial last piece into scratch, the
// whole pieces straight into the caller's buffer; the ack (this side's header) goes back at once.
class RecvWork final : public P2PWork {
 public:
  RecvWork(std::shared_ptr<::gloo::Context> context, core::Buf data, int src, std::uint64_t slot,
           std::uint64_t ack_slot, std::chrono::milliseconds timeout,
           std::shared_ptr<const ErrorMapper> errors, std::string operation, int peer, int me)
      : P2PWork(std::move(context), Header{.count = data.count, .dtype = data.dtype}, timeout,
                std::move(errors), std::move(operation), peer, me),
        data_(data) {
    const std::size_t length = stream_length(mine_);
    for_each_piece(length, [&](int k, std::size_t start, std::size_t capacity, std::size_t held) {
      if (k == 0) {
        first_ = std::make_unique_for_overwrite<std::byte[]>(capacity);
        first_size_ = capacity;
        first_buffer_ = context_->createUnboundBuffer(first_.get(), capacity);
        first_buffer_->recv(src, slot);
      } else if (held == capacity) {
        if (!body_) body_ = context_->createUnboundBuffer(data.data, data.bytes());
        body_->recv(src, slot, start - Header::wire_size, capacity);
        body_starts_.push_back(start);
      } else {  // the last piece, partly beyond the caller's buffer
        tail_ = std::make_unique_for_overwrite<std::byte[]>(capacity);
        tail_start_ = start;
        tail_buffer_ = context_->createUnboundBuffer(tail_.get(), capacity);
        tail_buffer_->recv(src, slot);
      }
    });
    mine_.encode(ack_.data());
    ack_buffer_ = context_->createUnboundBuffer(ack_.data(), ack_.size());
    ack_buffer_->send(src, ack_slot);
  }

 private:
  void finish() override {
    wait_recv(*first_buffer_);
    const Header sent = theirs({first_.get(), first_size_});
    // Pieces the sender sends land in the caller's buffer: wait for those even on a mismatch
    // (those it does not send never arrive).
    const std::size_t arriving = stream_length(sent);
    for (const std::size_t start : body_starts_)
      if (start < arriving) wait_recv(*body_);
    if (tail_buffer_ && tail_start_ < arriving) wait_recv(*tail_buffer_);
    wait_send(*ack_buffer_);
    if (sent != mine_) mismatch(peer(), sent, me(), mine_);
    auto* out = static_cast<std::byte*>(data_.data);
    const std::size_t in_first = std::min(first_size_, stream_length(mine_)) - Header::wire_size;
    if (in_first) std::memcpy(out, first_.get() + Header::wire_size, in_first);
    if (tail_buffer_) {
      const std::size_t offset = tail_start_ - Header::wire_size;
      std::memcpy(out + offset, tail_.get(), data_.bytes() - offset);
    }
  }

  core::Buf data_;
  std::unique_ptr<std::byte[]> first_;  // scratch, not zeroed: gloo writes it
  std::size_t first_size_ = 0;
  std::unique_ptr<UnboundBuffer> first_buffer_;
  std::unique_ptr<UnboundBuffer> body_;
  std::vector<std::size_t> body_starts_;
  std::unique_ptr<std::byte[]> tail_;
  std::size_t tail_start_ = 0;
  std::unique_ptr<UnboundBuffer> tail_buffer_;
  std::array<std::byte, Header::wire_size> ack_{};
  std::unique_ptr<UnboundBuffer> ack_buffer_;
};
}  // namespace

std::shared_ptr<GlooBackend::PostedAck> GlooBackend::post_ack(int dst, std::uint64_t slot) {
  auto ack = std::make_shared<PostedAck>();
  ack->buffer = context_->createUnboundBuffer(ack->bytes.data(), ack->bytes.size());
  ack->buffer->recv(dst, ack_prefix | slot);
  return ack;
}

Work GlooBackend::send(core::Buf data, int dst, int tag) {
  const int peer = spec_.global_ranks[static_cast<std::size_t>(dst)];
  const int me = spec_.global_ranks[static_cast<std::size_t>(spec_.rank)];
  std::string what = "send to rank " + std::to_string(peer) + " (tag " + std::to_string(tag) + ")";
  try {
    const std::pair key{dst, tag};
    const std::uint32_t n = sends_[key]++;
    auto& next = next_acks_[key];
    auto ack = next ? std::move(next) : post_ack(dst, slot_of(tag, n));
    next = post_ack(dst, slot_of(tag, n + 1));
    return Work(std::make_shared<SendWork>(context_, data, dst, data_prefix | slot_of(tag, n),
                                           std::move(ack), spec_.timeout, errors_, what, peer, me));
  } catch (...) {
    errors_->rethrow_current(what, peer, context_.get());
  }
}

Work GlooBackend::recv(core::Buf data, int src, int tag) {
  const int peer = spec_.global_ranks[static_cast<std::size_t>(src)];
  const int me = spec_.global_ranks[static_cast<std::size_t>(spec_.rank)];
  std::string what =
      "recv from rank " + std::to_string(peer) + " (tag " + std::to_string(tag) + ")";
  try {
    const std::uint64_t slot = slot_of(tag, recvs_[{src, tag}]++);
    return Work(std::make_shared<RecvWork>(context_, data, src, data_prefix | slot,
                                           ack_prefix | slot, spec_.timeout, errors_, what, peer,
                                           me));
  } catch (...) {
    errors_->rethrow_current(what, peer, context_.get());
  }
}

}  // namespace dist::real
