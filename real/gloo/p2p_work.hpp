// What gloo's send and recv Works share (p2p.cpp, p2p_recv.cpp): the slots a message travels
// under, and P2PWork, a Work that progresses only in wait() with the deadline and the error
// mapping of a p2p call. A message's first piece goes under its tag's head slot, the same for
// every message of that tag (gloo matches a pair's messages on one slot in order, and a receive
// from any rank can only name one slot); the other pieces and the ack under slots of the tag and
// the message's number for its (sender, receiver, tag).
#pragma once

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>

#include "core/p2p_header.hpp"
#include "core/work_state.hpp"
#include "dist/errors.hpp"
#include "real/gloo/errors.hpp"

namespace dist::real::gloo_p2p {

using Clock = std::chrono::steady_clock;
using Header = core::P2PHeader;
using UnboundBuffer = ::gloo::transport::UnboundBuffer;

// Top bytes of p2p slots; gloo's collectives use small prefixes, so they never collide.
inline constexpr std::uint64_t data_prefix = std::uint64_t{0xD1} << 56;
inline constexpr std::uint64_t ack_prefix = std::uint64_t{0xD2} << 56;
inline constexpr std::uint64_t head_prefix = std::uint64_t{0xD3} << 56;

inline std::size_t stream_length(const Header& h) {
  return Header::wire_size + h.count * dtype_size(h.dtype);
}

// The slot of the n-th message of a (peer, tag) pair, without its prefix.
inline std::uint64_t slot_of(int tag, std::uint32_t n) {
  return (std::uint64_t{static_cast<std::uint32_t>(tag)} << 24) | (std::uint64_t{n} & 0xFFFFFF);
}
// The slot of every message's first piece on `tag`.
inline std::uint64_t head_slot(int tag) {
  return head_prefix | std::uint64_t{static_cast<std::uint32_t>(tag)};
}

// The deadline, the error mapping, and the header check of both kinds of p2p Work.
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
      if (error_)  // a wait that dist::abort ended, or a transfer its closed connections ended
        if (auto why = errors_->aborted()) error_ = std::move(why);
    }
    if (error_) std::rethrow_exception(error_);
  }

  bool is_completed() final {
    std::lock_guard lock(mutex_);
    return done_;
  }

  // dist::abort (GlooBackend::abort, after ErrorMapper::set_aborted): the wait in progress, or the
  // next one, returns at once (gloo's abortWait), and the Work raises the abort. Closing the
  // connections does not wake a wait on an unbound buffer; this does.
  void abort_wait() {
    std::lock_guard lock(wait_mutex_);
    aborting_ = true;
    if (waiting_ && waiting_recv_) waiting_->abortWaitRecv();
    if (waiting_ && !waiting_recv_) waiting_->abortWaitSend();
  }

 protected:
  virtual void finish() = 0;  // waits for the transfer and checks the headers

  // The time gloo may still wait (at least 1 ms: gloo treats 0 as "its default").
  std::chrono::milliseconds left() const {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    return std::max(ms, std::chrono::milliseconds(1));
  }
  Clock::time_point deadline() const { return deadline_; }
  void wait_recv(UnboundBuffer& b) { await(b, true, nullptr, left()); }
  void wait_send(UnboundBuffer& b) { await(b, false, nullptr, left()); }
  // Waits up to `timeout` for `b`'s receive (`recv`; `rank`, when given, learns the sender) or
  // send; an abort_wait makes it throw, and wait_for then raises the group's abort.
  void await(UnboundBuffer& b, bool recv, int* rank, std::chrono::milliseconds timeout) {
    {
      std::lock_guard lock(wait_mutex_);
      if (!aborting_) {
        waiting_ = &b;
        waiting_recv_ = recv;
      }
    }
    const bool waited =
        !aborting_ && (recv ? b.waitRecv(rank, timeout) : b.waitSend(rank, timeout));
    std::lock_guard lock(wait_mutex_);
    waiting_ = nullptr;
    if (!waited) throw std::runtime_error("the wait was aborted");  // wait_for raises the abort
  }

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
  // An any-source receive learns its peer (a world rank) when the message's first piece came.
  void set_peer(int world_rank) { peer_ = world_rank; }

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
  std::mutex wait_mutex_;  // guards the three below, for abort_wait from another thread
  UnboundBuffer* waiting_ = nullptr;
  bool waiting_recv_ = false;
  std::atomic<bool> aborting_{false};
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace dist::real::gloo_p2p
