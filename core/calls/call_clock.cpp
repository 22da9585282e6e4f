// CallClock: the tick rate is measured against the steady clock since the recorder began, and
// kept once the span is long enough to be exact to a few parts per million.
#include "core/calls/call_clock.hpp"

#include "core/calls/flight_recorder.hpp"

namespace dist::core {

CallClock::CallClock()
    : base_ticks_(now()),
      base_steady_(std::chrono::steady_clock::now()),
      base_wall_us_(wall_clock_us()) {}

double CallClock::ticks_per_ns() const {
  if (const double known = rate_.load(std::memory_order_relaxed); known > 0) return known;
  const std::uint64_t ticks = now();
  const auto span = std::chrono::steady_clock::now() - base_steady_;
  const double ns =
      static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(span).count());
  if (ns <= 0) return 1.0;
  const double rate = static_cast<double>(ticks - base_ticks_) / ns;
  if (span >= std::chrono::milliseconds(50)) rate_.store(rate, std::memory_order_relaxed);
  return rate > 0 ? rate : 1.0;
}

std::int64_t CallClock::Reading::wall_us(std::uint64_t ticks) const {
  if (ticks == 0) return 0;
  const double ns = (static_cast<double>(ticks) - static_cast<double>(clock_.base_ticks_)) / rate_;
  return clock_.base_wall_us_ + static_cast<std::int64_t>(ns / 1000.0);
}

}  // namespace dist::core
