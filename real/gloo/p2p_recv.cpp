// RecvWork and RecvOrder (p2p_recv.hpp): how a receive posts its pieces and its ack, and the
// order a group's receives with one tag are posted in when one is from any_source.
#include "real/gloo/p2p_recv.hpp"

#include <cstring>

#include "real/gloo/p2p_pieces.hpp"

namespace dist::real::gloo_p2p {

RecvWork::RecvWork(std::shared_ptr<::gloo::Context> context, core::Buf data, int src, int tag,
                   std::chrono::milliseconds timeout, std::shared_ptr<const ErrorMapper> errors,
                   std::string operation, int peer, int me, std::vector<int> world_ranks,
                   std::weak_ptr<RecvOrder> order)
    : P2PWork(std::move(context), Header{.count = data.count, .dtype = data.dtype}, timeout,
              std::move(errors), std::move(operation), peer, me),
      data_(data),
      src_(src),
      tag_(tag),
      world_ranks_(std::move(world_ranks)),
      order_(std::move(order)) {}

void RecvWork::post_head(const std::vector<int>& from) {
  first_size_ = piece_capacity(0);
  first_ = std::make_unique_for_overwrite<std::byte[]>(first_size_);
  first_buffer_ = context_->createUnboundBuffer(first_.get(), first_size_);
  if (from.size() == 1) {
    first_buffer_->recv(from[0], head_slot(tag_));
  } else {
    first_buffer_->recv(from, head_slot(tag_));
  }
}

void RecvWork::post_rest(int src, std::uint32_t n) {
  src_ = src;
  set_peer(world_ranks_[static_cast<std::size_t>(src)]);
  const std::uint64_t slot = data_prefix | slot_of(tag_, n);
  for_each_piece(stream_length(mine_),
                 [&](int k, std::size_t start, std::size_t capacity, std::size_t held) {
    if (k == 0) return;  // the head, posted already
    if (held == capacity) {
      if (!body_) body_ = context_->createUnboundBuffer(data_.data, data_.bytes());
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
  ack_buffer_->send(src, ack_prefix | slot_of(tag_, n));
  settled = true;
}

int RecvWork::await_head(Clock::time_point deadline) {
  // At least 1 ms: gloo treats 0 as "its default".
  const auto left =
      std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()),
               std::chrono::milliseconds(1));
  int sender = -1;
  await(*first_buffer_, true, &sender, left);
  head_done_ = true;
  return sender;
}

void RecvWork::finish() {
  if (!settled) {
    const auto order = order_.lock();
    if (!order)
      throw BackendError("gloo recv from any rank (tag " + std::to_string(tag_) +
                         "): its group was destroyed before a message matched it");
    order->settle(*this, deadline());
  }
  if (!head_done_) wait_recv(*first_buffer_);
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

RecvOrder::RecvOrder(int me, int size) {
  for (int r = 0; r < size; ++r)
    if (r != me) others_.push_back(r);
}

void RecvOrder::add(const std::shared_ptr<RecvWork>& work) {
  std::lock_guard lock(mutex_);
  auto& queue = queued_[work->tag()];
  queue.push_back(work);
  if (queue.size() == 1) post_front(queue);
  if (queue.empty()) queued_.erase(work->tag());
}

void RecvOrder::post_front(std::deque<std::shared_ptr<RecvWork>>& queue) {
  while (!queue.empty()) {
    RecvWork& front = *queue.front();
    if (front.src() == any_source) {
      front.post_head(others_);
      return;  // it stays in front until its first piece came
    }
    front.post_head({front.src()});
    front.post_rest(front.src(), next_number(front.src(), front.tag()));
    queue.pop_front();
  }
}

void RecvOrder::settle(RecvWork& work, Clock::time_point deadline) {
  std::lock_guard lock(mutex_);
  const auto it = queued_.find(work.tag());
  if (it == queued_.end()) return;
  auto& queue = it->second;
  while (!work.settled && !queue.empty()) {
    // The front is from any_source with its head posted: its sender tells the message's number.
    const std::shared_ptr<RecvWork> front = queue.front();
    const int sender = front->await_head(deadline);
    front->post_rest(sender, next_number(sender, front->tag()));
    queue.pop_front();
    post_front(queue);
  }
  if (queue.empty()) queued_.erase(it);
}

}  // namespace dist::real::gloo_p2p
