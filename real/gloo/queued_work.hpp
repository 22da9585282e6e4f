// The Work of a gloo collective (a call in its group's CallQueue), and what happens when the caller
// stops waiting for one: Work::wait's own timeout passed, or the Work was destroyed by an exception
// unwinding the stack that holds its buffers. Gloo cannot cancel a call, so the rank gives it up:
// the group becomes unusable (its later calls raise), the store records which call was given up
// (core/store/given_up.hpp: the peers in it, or arriving later, raise naming this rank instead of
// a lost connection), and the group's connections close, which ends the call on the peers at
// once; nothing arrives into the caller's buffers or leaves them from then on, and the call's
// reduction steps (the only other writes gloo makes to them mid-call) are fenced off. So the
// TimeoutError comes at the caller's timeout and the buffers are the caller's again, though the
// call itself stays inside gloo, on the group's worker, until the group's timeout ends it.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/host_reduce.hpp"
#include "core/store/store.hpp"
#include "core/work_state.hpp"
#include "real/gloo/call_queue.hpp"

namespace gloo {
class Context;
}

namespace dist::real {

class GlooGiveUp {
 public:
  GlooGiveUp(std::shared_ptr<CallQueue> queue, std::shared_ptr<::gloo::Context> context,
             std::shared_ptr<core::Store> store, std::string prefix, int me, std::string group)
      : queue_(std::move(queue)),
        context_(std::move(context)),
        store_(std::move(store)),
        prefix_(std::move(prefix)),
        me_(me),
        group_(std::move(group)) {}

  // Gives `call` up (`why`: "Work::wait's timeout of 100 ms") and returns once it has ended.
  void operator()(CallQueue::Call& call, const std::string& why) const;
  // dist::abort: every call not started fails with `why` (an Aborted), and the connections close
  // as a give-up closes them: a running call's Work raises `why` at once (QueuedWork), its
  // buffers untouched from here on. Waits for nothing.
  void abort(const std::exception_ptr& why) const;
  // `step` as gloo's reduction function, doing nothing once a call was given up.
  std::function<void(void*, const void*, const void*, std::size_t)> fenced(
      core::ReduceStep step) const;
  // Runs `write` (a write to the caller's buffers after gloo's call) unless the call was given up.
  void unless_given_up(const std::function<void()>& write) const;
  // The error of a collective that failed (call from a catch block) when a member gave it up:
  // a BackendError naming that member, after the group is closed; else returns.
  void throw_if_given_up(const std::string& where, std::uint64_t index) const;

 private:
  // Closes the group's connections, then the fence: nothing reaches or leaves the buffers of a
  // call still inside gloo from here on.
  void disconnect() const;

  std::shared_ptr<CallQueue> queue_;
  std::shared_ptr<::gloo::Context> context_;
  std::shared_ptr<core::Store> store_;
  std::string prefix_;
  int me_;
  std::string group_;  // "group of world ranks [0, 1]"
  struct Fence {
    std::mutex mutex;  // held by a reduction step while it runs
    bool closed = false;
  };
  std::shared_ptr<Fence> fence_ = std::make_shared<Fence>();
};

class QueuedWork final : public detail::WorkState {
 public:
  QueuedWork(std::shared_ptr<CallQueue> queue, std::shared_ptr<CallQueue::Call> call,
             std::shared_ptr<const GlooGiveUp> give_up)
      : queue_(std::move(queue)), call_(std::move(call)), give_up_(std::move(give_up)) {}

  void wait() override;
  bool is_completed() override;
  void wait_for(std::chrono::milliseconds timeout) override;
  void start() override { queue_->launch(*call_); }
  void abandon() noexcept override;
  std::string describe() const override { return "gloo " + call_->name; }

 private:
  void rethrow() const;

  std::shared_ptr<CallQueue> queue_;
  std::shared_ptr<CallQueue::Call> call_;
  std::shared_ptr<const GlooGiveUp> give_up_;
};

}  // namespace dist::real
