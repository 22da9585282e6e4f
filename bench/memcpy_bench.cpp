// The memory-traffic floor: one thread's memcpy bandwidth (bytes copied per second), against which
// sim's large collectives are judged (floor = 2 × ranks × bytes at this bandwidth).
#include <chrono>
#include <cstring>
#include <vector>

#include "bench/harness.hpp"
#include "bench/register.hpp"

namespace dist::bench {

namespace {
void copy_benchmark(benchmark::State& state, std::size_t bytes) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  std::memcpy(dst.data(), src.data(), bytes);  // first touch outside the timing
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  benchmark::DoNotOptimize(dst.data());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.counters["bytes"] = static_cast<double>(bytes);
}
}  // namespace

void register_memcpy() {
  std::vector<std::size_t> chosen = sizes();
  if (profile() == Profile::smoke) chosen = {std::size_t{1} << 20, std::size_t{64} << 20};
  for (std::size_t bytes : chosen)
    add_benchmark("memcpy/bytes:" + std::to_string(bytes),
                  [bytes](benchmark::State& state) { copy_benchmark(state, bytes); });
}

}  // namespace dist::bench
