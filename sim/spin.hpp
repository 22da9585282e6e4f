// Busy-waiting primitives for the fabric's short critical sections: a CPU pause, a bounded
// try-lock spin in front of a blocking mutex, and a spin lock for sections of a few instructions.
// A futex sleep and wake-up costs a context switch (microseconds); a small op takes less.
#pragma once

#include <atomic>
#include <mutex>
#include <thread>

namespace dist::sim {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Asks for the cache line of `p` in exclusive state, ahead of a write (PREFETCHW: a no-op on x86
// cores without it, which decode it as a hint).
inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1);
#endif
}

// Asks for the lines of `bytes` bytes at `p`: for writing at once (`now`), or into the outer
// caches ahead of their use.
inline void prefetch_lines(const void* p, std::size_t bytes, bool now) {
  const auto* at = static_cast<const char*>(p);
  for (std::size_t off = 0; off < bytes; off += 64) {
    if (now) prefetch_for_write(at + off);
    else __builtin_prefetch(at + off, 0, 1);
  }
}

// Locks `mutex`, first trying `spins` times with a pause between tries (0: lock at once). Worth it
// only while the holder has a core of its own, so it lets go within the spin.
inline std::unique_lock<std::mutex> lock_spinning(std::mutex& mutex, int spins) {
  for (int i = 0; i < spins; ++i) {
    if (mutex.try_lock()) return std::unique_lock<std::mutex>(mutex, std::adopt_lock);
    cpu_relax();
  }
  return std::unique_lock<std::mutex>(mutex);
}

// A lock for sections of a few instructions (a push or pop): spins on a read, and yields the core
// after a while in case the holder was preempted (more threads than cores).
class SpinLock {
 public:
  void lock() {
    for (int i = 0;; ++i) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++i % 64 == 0) std::this_thread::yield();
        else cpu_relax();
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace dist::sim
