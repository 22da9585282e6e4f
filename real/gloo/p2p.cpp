// GlooBackend's send and recv. A message is the sender's core::P2PHeader (count, dtype) followed
// by its payload, cut into pieces of fixed capacities (p2p_pieces.hpp): the first under its tag's
// head slot, the others under a slot made of the tag and a per-(peer, tag) message count, so the
// n-th send matches the n-th recv and the k-th piece the k-th piece (p2p_work.hpp). The receiver
// answers each message with its own header (the ack, under a second slot; the sender posts the
// recv of the next message's ack with each send, so a receiver that is ready first has answered by
// the time the sender waits). Everything is posted when the call is made, so nothing waits on the
// other rank's wait(): a ring of isend/irecv cannot deadlock; a recv from any_source, and the
// recvs with its tag made after it, post the rest once its first piece named the sender
// (p2p_recv.hpp), and its ack goes in its wait(). In wait() the receiver checks the sender's header
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

#include "real/gloo/backend.hpp"
#include "real/gloo/p2p_pieces.hpp"
#include "real/gloo/p2p_recv.hpp"
#include "real/gloo/p2p_work.hpp"

namespace dist::real {

struct GlooBackend::PostedAck {
  std::array<std::byte, core::P2PHeader::wire_size> bytes{};
  std::unique_ptr<::gloo::transport::UnboundBuffer> buffer;
};

namespace {
using namespace gloo_p2p;

// A send: piece 0 (the header and the payload's first bytes) from a copy, the other pieces from
// the caller's buffer; the receiver's ack arrives in `ack_`.
class SendWork final : public P2PWork {
 public:
  SendWork(std::shared_ptr<::gloo::Context> context, core::ConstBuf data, int dst,
           std::uint64_t head, std::uint64_t slot, std::shared_ptr<GlooBackend::PostedAck> ack,
           std::chrono::milliseconds timeout, std::shared_ptr<const ErrorMapper> errors,
           std::string operation, int peer, int me)
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
        first_buffer_->send(dst, head);
        return;
      }
      if (!body_) body_ = context_->createUnboundBuffer(core::engine_reads(data), data.bytes());
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

}  // namespace

std::shared_ptr<GlooBackend::PostedAck> GlooBackend::post_ack(int dst, std::uint64_t slot) {
  auto ack = std::make_shared<PostedAck>();
  ack->buffer = context_->createUnboundBuffer(ack->bytes.data(), ack->bytes.size());
  ack->buffer->recv(dst, ack_prefix | slot);
  return ack;
}

Work GlooBackend::send(core::ConstBuf data, int dst, int tag) {
  const int peer = spec_.global_ranks[static_cast<std::size_t>(dst)];
  const int me = spec_.global_ranks[static_cast<std::size_t>(spec_.rank)];
  std::string what = "send to rank " + std::to_string(peer) + " (tag " + std::to_string(tag) + ")";
  try {
    std::lock_guard lock(p2p_mutex_);
    const std::pair key{dst, tag};
    const std::uint32_t n = sends_[key]++;
    auto& next = next_acks_[key];
    auto ack = next ? std::move(next) : post_ack(dst, slot_of(tag, n));
    next = post_ack(dst, slot_of(tag, n + 1));
    auto work = std::make_shared<SendWork>(context_, data, dst, head_slot(tag),
                                           data_prefix | slot_of(tag, n), std::move(ack),
                                           spec_.timeout, errors_, what, peer, me);
    track(work);
    return Work(std::move(work));
  } catch (...) {
    errors_->rethrow_current(what, peer, context_.get());
  }
}

void GlooBackend::track(const std::shared_ptr<gloo_p2p::P2PWork>& work) {
  // Forgets the Works gone since the list last doubled: amortized O(1) a call.
  if (p2p_works_.size() >= 2 * p2p_works_live_ + 16) {
    std::erase_if(p2p_works_, [](const auto& w) { return w.expired(); });
    p2p_works_live_ = p2p_works_.size();
  }
  p2p_works_.push_back(work);
}

Work GlooBackend::recv(core::Buf data, int src, int tag) {
  const bool any = src == any_source;
  const int peer = any ? -1 : spec_.global_ranks[static_cast<std::size_t>(src)];
  const int me = spec_.global_ranks[static_cast<std::size_t>(spec_.rank)];
  std::string what = "recv from " +
                     (any ? std::string("any rank") : "rank " + std::to_string(peer)) + " (tag " +
                     std::to_string(tag) + ")";
  try {
    std::lock_guard lock(p2p_mutex_);
    auto work = std::make_shared<RecvWork>(context_, data, src, tag, spec_.timeout, errors_, what,
                                           peer, me, spec_.global_ranks, recv_order_);
    recv_order_->add(work);
    track(work);
    return Work(std::move(work));
  } catch (...) {
    errors_->rethrow_current(what, peer, context_.get());
  }
}

}  // namespace dist::real
