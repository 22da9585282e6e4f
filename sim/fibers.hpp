// Ranks as fibers (deterministic mode): each rank's body runs on a Boost.Context fiber of the
// calling thread. The thread's own context is the scheduler: it resumes the rank the baton names,
// and a rank that waits suspends back to it. The sanitizers' fiber annotations and the C++
// runtime's per-thread exception state follow each switch.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dist/sim/run.hpp"
#include "sim/fiber_stacks.hpp"

namespace dist::sim {

// Whether `cluster`'s ranks run as fibers: deterministic mode, unless Cluster::fibers is false.
inline bool runs_as_fibers(const Cluster& cluster) {
  return cluster.schedule == Schedule::deterministic && cluster.fibers;
}

class Fibers {
 public:
  struct Hooks {
    std::function<void(int)> body;   // rank r's whole life (never throws)
    std::function<int()> next;       // the rank to resume next, -1 when none
    std::function<void(int)> enter;  // on the scheduler, before rank r is resumed
    // Rank r could not be started (its stack could not be mapped): `why`.
    std::function<void(int, const std::string&)> unstarted;
    // Optional, for large worlds, whose ranks' frames are out of cache by their turn: the rank
    // likely to be resumed after rank r (-1: none known), whose frames are asked for while r runs.
    std::function<int(int)> upcoming;
  };

  Fibers(int ranks, std::size_t stack_size);
  ~Fibers();
  Fibers(const Fibers&) = delete;
  Fibers& operator=(const Fibers&) = delete;

  // Starts every rank in rank order (each runs until it first suspends), then resumes next()
  // until it says -1; ranks still suspended then are resumed with suspend() throwing, so each
  // unwinds and ends.
  void run(const Hooks& hooks);
  // On the running rank's fiber: back to the scheduler until resumed. Throws RankFailure when
  // the scheduler is ending the run.
  void suspend();
  // On the running rank's fiber, mid-turn: asks for the frames of the rank likely resumed after
  // it (Hooks::upcoming) into the outer caches, while this rank's own misses are behind it.
  void prefetch_upcoming() const;
  // Whether the caller runs on the scheduler's thread (a rank's fiber or the scheduler itself).
  bool on_own_thread() const { return std::this_thread::get_id() == thread_; }
  const FiberStacks& stacks() const { return stacks_; }

 private:
  struct Slot;
  struct Scheduler;  // the scheduler's side of every switch
  void start(int rank, const Hooks& hooks);
  void resume(int rank);
  // The lines of a suspended rank's frames: for writing at once (`now`), or into the outer
  // caches ahead of its turn.
  static void prefetch_frames(const Slot& slot, bool now);
  void check_stack(int rank) const;

  FiberStacks stacks_;
  std::vector<Slot> slots_;  // by rank
  std::unique_ptr<Scheduler> scheduler_;
  std::thread::id thread_;
  int running_ = -1;
  const Hooks* hooks_ = nullptr;  // during run()
  bool stopping_ = false;
};

}  // namespace dist::sim
