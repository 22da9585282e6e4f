// gloo's receives: RecvWork, one receive, and RecvOrder, which posts a group's receives so that
// those with one tag match in the order they were made, a receive from any_source included.
// Gloo cannot keep that order itself: a receive from a given rank is matched ahead of an earlier
// one from any rank, and a receive from any rank takes one slot while the pieces after the first
// are under the message's number, known only once the sender is. So a receive from any_source
// posts only its first piece, from every other rank, and the receives made after it with its tag
// wait, unposted, until that piece came (in some Work's wait(), which settles the receives ahead
// of its own first): then the sender and the message's number are known, the rest of it and its
// ack are posted, and the receives queued behind it follow.
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/backend_impl.hpp"
#include "real/gloo/p2p_work.hpp"

namespace dist::real::gloo_p2p {

class RecvOrder;

// A recv: every piece at its full capacity, piece 0 and a partial last piece into scratch, the
// whole pieces straight into the caller's buffer; the ack (this side's header) goes back once the
// sender is known (at once for a receive from a given rank).
class RecvWork final : public P2PWork {
 public:
  // `src`: a group rank or dist::any_source; `world_ranks`: the group's, to name a sender.
  RecvWork(std::shared_ptr<::gloo::Context> context, core::Buf data, int src, int tag,
           std::chrono::milliseconds timeout, std::shared_ptr<const ErrorMapper> errors,
           std::string operation, int peer, int me, std::vector<int> world_ranks,
           std::weak_ptr<RecvOrder> order);

  int source() const override { return src_; }

  // Called by RecvOrder under its lock:
  int src() const { return src_; }
  int tag() const { return tag_; }
  // Posts piece 0 from the group ranks `from` under the tag's head slot.
  void post_head(const std::vector<int>& from);
  // Posts the other pieces of the n-th message from group rank `src`, and the ack.
  void post_rest(int src, std::uint32_t n);
  // Waits (until `deadline`) for piece 0 of a receive from any_source; returns its sender.
  int await_head(Clock::time_point deadline);
  std::atomic<bool> settled{false};  // posted entirely (its sender known)

 private:
  void finish() override;

  core::Buf data_;
  int src_;
  int tag_;
  std::vector<int> world_ranks_;
  std::weak_ptr<RecvOrder> order_;
  bool head_done_ = false;              // piece 0 came (await_head)
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

// The receives of one group (GlooBackend owns it; a RecvWork refers to it while queued).
class RecvOrder {
 public:
  // `me`, `size`: the caller's group rank and the group's size.
  RecvOrder(int me, int size);

  // Posts `work` now, or queues it behind an unsettled receive from any_source with its tag.
  void add(const std::shared_ptr<RecvWork>& work);
  // Settles the receives queued ahead of `work` with its tag, then `work` itself, so that it is
  // posted entirely; each first piece waited for until `deadline`.
  void settle(RecvWork& work, Clock::time_point deadline);

 private:
  // Posts the front of `queue` (and those after it, up to the next receive from any_source).
  void post_front(std::deque<std::shared_ptr<RecvWork>>& queue);
  std::uint32_t next_number(int src, int tag) { return counts_[{src, tag}]++; }

  std::mutex mutex_;
  std::vector<int> others_;  // the group ranks a receive from any_source takes from
  // tag -> receives not settled: the front is from any_source with piece 0 posted, the rest wait.
  std::map<int, std::deque<std::shared_ptr<RecvWork>>> queued_;
  std::map<std::pair<int, int>, std::uint32_t> counts_;  // (src, tag) -> messages so far
};

}  // namespace dist::real::gloo_p2p
