// The flight recorder's clock: a timestamp read on every call must cost little (a VM's
// clock_gettime takes ~27 ns, twice per call), so records keep raw ticks (the TSC on x86-64,
// else the steady clock's nanoseconds) and convert them to wall-clock microseconds when read.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace dist::core {

class CallClock {
 public:
  CallClock();
  static std::uint64_t now() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
  }
  // Converts ticks to the wall clock (microseconds since the epoch; 0 stays 0: not yet) at one
  // tick rate, so the times of one reading keep their order while the rate is still measured.
  class Reading {
   public:
    std::int64_t wall_us(std::uint64_t ticks) const;

   private:
    friend class CallClock;
    Reading(const CallClock& clock, double ticks_per_ns) : clock_(clock), rate_(ticks_per_ns) {}
    const CallClock& clock_;
    double rate_;
  };
  Reading reading() const { return Reading(*this, ticks_per_ns()); }

 private:
  double ticks_per_ns() const;

  std::uint64_t base_ticks_;
  std::chrono::steady_clock::time_point base_steady_;
  std::int64_t base_wall_us_;
  mutable std::atomic<double> rate_{0};  // ticks per ns, once measured over 50 ms or more
};

}  // namespace dist::core
