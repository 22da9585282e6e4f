// Fibers: the scheduler loop, and each switch between it and a rank's fiber with what has to follow
// the switch (AddressSanitizer's and ThreadSanitizer's fiber annotations, the exception state).
#include "sim/fibers.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

#include "dist/errors.hpp"
#include "sim/spin.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define DIST_FIBERS_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define DIST_FIBERS_TSAN 1
#endif

namespace dist::sim {

namespace ctx = boost::context;

namespace {
// libstdc++'s per-thread exception state (__cxa_eh_globals): the exceptions being handled and the
// count of those in flight. A rank suspended inside a catch block keeps its own.
struct EhState {
  void* caught = nullptr;
  unsigned int uncaught = 0;
};

EhState& eh_globals() { return *reinterpret_cast<EhState*>(abi::__cxa_get_globals()); }

// Hands Boost.Context a stack the pool owns (the pool takes it back when the fiber has ended).
struct PoolStack {
  FiberStacks::Stack stack;
  ctx::stack_context allocate() {
    ctx::stack_context sc;
    sc.size = stack.size;
    sc.sp = stack.top();
    return sc;
  }
  void deallocate(ctx::stack_context&) noexcept {}
};

// The sanitizers' fiber switches (no-ops without them). `save`: where the leaving context's fake
// stack is kept (null when it ends); `bottom`/`size`: the stack being entered.
void asan_start([[maybe_unused]] void** save, [[maybe_unused]] const void* bottom,
                [[maybe_unused]] std::size_t size) {
#ifdef DIST_FIBERS_ASAN
  __sanitizer_start_switch_fiber(save, bottom, size);
#endif
}
void asan_finish([[maybe_unused]] void* saved, [[maybe_unused]] const void** from_bottom,
                 [[maybe_unused]] std::size_t* from_size) {
#ifdef DIST_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(saved, from_bottom, from_size);
#endif
}
void* tsan_current() {
#ifdef DIST_FIBERS_TSAN
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}
void* tsan_create() {
#ifdef DIST_FIBERS_TSAN
  return __tsan_create_fiber(0);
#else
  return nullptr;
#endif
}
void tsan_switch([[maybe_unused]] void* fiber) {
#ifdef DIST_FIBERS_TSAN
  __tsan_switch_to_fiber(fiber, 0);
#endif
}
void tsan_destroy([[maybe_unused]] void* fiber) {
#ifdef DIST_FIBERS_TSAN
  if (fiber) __tsan_destroy_fiber(fiber);
#endif
}
}  // namespace

struct Fibers::Slot {
  ctx::fiber fiber;  // empty before the rank starts and once it has ended
  FiberStacks::Stack stack;
  EhState eh;
  void* fake_stack = nullptr;  // AddressSanitizer's, while suspended
  void* tsan = nullptr;
  const std::byte* sp = nullptr;  // suspend()'s frame when it last switched out
};

struct Fibers::Scheduler {
  ctx::fiber main;  // the scheduler, while a rank's fiber runs
  EhState eh;
  void* fake_stack = nullptr;
  const void* bottom = nullptr;  // the scheduler's stack, as AddressSanitizer reports it
  std::size_t size = 0;
  void* tsan = nullptr;
};

Fibers::Fibers(int ranks, std::size_t stack_size)
    : stacks_(static_cast<std::size_t>(ranks), FiberStacks::size_for(stack_size)),
      scheduler_(std::make_unique<Scheduler>()),
      thread_(std::this_thread::get_id()) {
  slots_.resize(static_cast<std::size_t>(ranks));
  scheduler_->tsan = tsan_current();
}

Fibers::~Fibers() {
  for (auto& slot : slots_) tsan_destroy(slot.tsan);
}

void Fibers::start(int rank, const Hooks& hooks) {
  Slot& slot = slots_[static_cast<std::size_t>(rank)];
  slot.stack = stacks_.take();
  slot.tsan = tsan_create();
  Scheduler& s = *scheduler_;
  slot.fiber = ctx::fiber(std::allocator_arg, PoolStack{slot.stack},
                          [this, rank, &hooks, &s](ctx::fiber&& main) {
    s.main = std::move(main);
    asan_finish(nullptr, &s.bottom, &s.size);
    hooks.body(rank);
    asan_start(nullptr, s.bottom, s.size);  // this fiber ends
    tsan_switch(s.tsan);
    return std::move(s.main);
  });
}

// Asks for the lines a resumed rank touches first, all at once: the switch's saved registers
// below suspend()'s frame and the frames it returns through above (about 2 KiB in
// bench/sim_scale). In a large world they are out of cache, and returning through them would miss
// one line after another. The upcoming rank's are asked for during the running rank's turn, at
// its posts (prefetch_upcoming), into the outer caches: asked for at the switch, they waited
// behind the resumed rank's own. (Figures: docs/benchmarks.md, sim at scale.)
void Fibers::prefetch_frames(const Slot& slot, bool now) {
  if (!slot.sp) return;
  constexpr std::ptrdiff_t below = 192, above = 4096;
  const std::byte* end = std::min(slot.sp + above, static_cast<const std::byte*>(slot.stack.top()));
  prefetch_lines(slot.sp - below, static_cast<std::size_t>(end - (slot.sp - below)), now);
}

void Fibers::prefetch_upcoming() const {
  if (running_ < 0 || !hooks_ || !hooks_->upcoming) return;
  const int next = hooks_->upcoming(running_);
  if (next >= 0 && next != running_ && static_cast<std::size_t>(next) < slots_.size())
    prefetch_frames(slots_[static_cast<std::size_t>(next)], false);
}

void Fibers::resume(int rank) {
  Slot& slot = slots_[static_cast<std::size_t>(rank)];
  Scheduler& s = *scheduler_;
  running_ = rank;
  stacks_.prefetch_canary(slot.stack);  // in cache when the rank switches out and it is checked
  prefetch_frames(slot, true);
  s.eh = eh_globals();
  eh_globals() = slot.eh;
  asan_start(&s.fake_stack, slot.stack.bottom, slot.stack.size);
  tsan_switch(slot.tsan);
  slot.fiber = std::move(slot.fiber).resume();
  asan_finish(s.fake_stack, nullptr, nullptr);
  slot.eh = eh_globals();
  eh_globals() = s.eh;
  running_ = -1;
  check_stack(rank);
  if (!slot.fiber) {
    stacks_.give_back(slot.stack);
    tsan_destroy(slot.tsan);
    slot.tsan = nullptr;
  }
}

void Fibers::suspend() {
  if (running_ < 0) return;  // on the scheduler: nothing to suspend
  Slot& slot = slots_[static_cast<std::size_t>(running_)];
  const int rank = running_;
  Scheduler& s = *scheduler_;
  slot.sp = static_cast<const std::byte*>(__builtin_frame_address(0));
  asan_start(&slot.fake_stack, s.bottom, s.size);
  tsan_switch(s.tsan);
  s.main = std::move(s.main).resume();
  asan_finish(slot.fake_stack, &s.bottom, &s.size);
  if (stopping_)
    throw RankFailure("rank " + std::to_string(rank) +
                          " was stopped: the deterministic scheduler found no rank to run while it "
                          "still waited",
                      rank);
}

// A rank that ran past the bottom of its stack has written over another rank's: nothing of the
// run can be trusted, so the process stops here with the cure.
void Fibers::check_stack(int rank) const {
  const Slot& slot = slots_[static_cast<std::size_t>(rank)];
  if (stacks_.intact(slot.stack)) return;
  std::fprintf(stderr,
               "dist::sim::run: rank %d overflowed its fiber stack of %zu KiB (%s); raise "
               "Cluster::stack_size\n",
               rank, stacks_.stack_size() / 1024, stacks_.protection().c_str());
  std::abort();
}

void Fibers::run(const Hooks& hooks) {
  hooks_ = &hooks;
  const int n = static_cast<int>(slots_.size());
  for (int r = 0; r < n; ++r) {
    try {
      start(r, hooks);
    } catch (const std::bad_alloc&) {
      const std::string why = "could not map a fiber stack of " +
                              std::to_string(stacks_.stack_size() / 1024) +
                              " KiB (out of memory; a smaller Cluster::stack_size needs less)";
      for (int k = r; k < n; ++k) hooks.unstarted(k, why);
      break;
    }
    hooks.enter(r);
    resume(r);
  }
  for (int r = hooks.next(); r >= 0 && slots_[static_cast<std::size_t>(r)].fiber;
       r = hooks.next()) {
    hooks.enter(r);
    resume(r);
  }
  stopping_ = true;  // not expected: the baton passes until every rank has ended
  for (int r = 0; r < n; ++r) {
    Slot& slot = slots_[static_cast<std::size_t>(r)];
    while (slot.fiber) {
      hooks.enter(r);
      resume(r);
    }
  }
  hooks_ = nullptr;
}

}  // namespace dist::sim
