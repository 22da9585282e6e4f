// A gloo group's collectives, in call order. Gloo's algorithms block the thread that runs them, so
// an asynchronous call (all_reduce_async, barrier_async, ...) is queued and run by the group's
// worker thread while the caller goes on, as torch's ProcessGroupGloo does. A blocking call is
// queued too but runs on the caller's own thread once the calls before it are done: no thread
// hand-off on the path of a blocking call. Every call of a group runs strictly after the ones
// before it, whichever thread runs it; a call made while the group's call runs (the composed
// operations of core::BackendImpl) runs at once, inside it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace dist::real {

// Made with std::make_shared: the worker thread holds the queue while it runs.
class CallQueue : public std::enable_shared_from_this<CallQueue> {
 public:
  using Clock = std::chrono::steady_clock;

  // One collective: `body` runs it (throwing its dist error); `index` is its number in the group.
  struct Call {
    std::function<void()> body;
    std::uint64_t index = 0;
    std::string name;  // "all_reduce", for errors
    enum class Stage { queued, running, done } stage = Stage::queued;
    bool launched = false;  // the worker may run it (an asynchronous call, or one behind others)
    std::exception_ptr error;
  };

  CallQueue() = default;
  CallQueue(const CallQueue&) = delete;
  CallQueue& operator=(const CallQueue&) = delete;
  ~CallQueue();
  // Runs every queued call, then lets the worker go (the group's backend is closing). A call
  // given up on a closed queue is not waited for: it stays inside gloo until the group's timeout,
  // on the worker, which then ends by itself.
  void drain();

  // Queues a call (the one before it is launched: only the newest may wait for its caller). A
  // call on the thread running this group's current call, or on a closed queue, is done at once.
  std::shared_ptr<Call> push(std::uint64_t index, std::string name, std::function<void()> body);
  // Lets the worker run `call` (an asynchronous call's Work was handed to the user).
  void launch(Call& call);
  // Returns once `call` is done: runs it on this thread when it is next and has not started.
  void finish(Call& call);
  // Launches `call` and waits until it is done or `deadline` passes (false).
  bool finish_by(Call& call, Clock::time_point deadline);
  bool is_done(Call& call);

  // The group is unusable: every call not yet started, and every later one, fails with `why`
  // (started calls run on). The first reason stays.
  void close(std::exception_ptr why);
  std::exception_ptr closed();
  // dist::abort: after close, every wait for a call (finish, finish_by) returns at once, the
  // running call's too, though it stays inside gloo until its timeout.
  void release_waits();
  bool released();

 private:
  void work();
  // Runs the front call (claimed by this thread under `lock`), then wakes the waiters.
  void run(std::unique_lock<std::mutex>& lock, Call& call);
  void fail(Call& call, std::exception_ptr why);
  // Marks `call` launched and wakes the worker, starting it first if needed (under mutex_).
  void launch_locked(Call& call);
  void start_worker();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Call>> calls_;  // not done, in call order; the front may be running
  std::exception_ptr closed_;
  std::thread::id runner_;  // the thread running the front call, while one does
  bool worker_ = false;     // started (detached) with the first launched call
  bool stopping_ = false;   // drained: the worker ends once nothing is launched
  bool released_ = false;   // release_waits(): no wait waits for a call any more
};

}  // namespace dist::real
