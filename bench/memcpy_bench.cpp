// The memory-traffic floor: memcpy bandwidth (bytes copied per second) of one thread and of every
// core at once, against which sim's large collectives are judged (floor = 2 × ranks × bytes at
// the parallel bandwidth: sim's ranks copy on every core too).
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <thread>
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

// `bytes` copied by every core at once, each its own slice, by threads that persist across the
// iterations (a barrier starts each copy and another ends it).
void parallel_copy_benchmark(benchmark::State& state, std::size_t bytes) {
  const auto cores = static_cast<std::size_t>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  const std::size_t slice = (bytes + cores - 1) / cores;
  bool stop = false;
  std::barrier start(static_cast<std::ptrdiff_t>(cores)), done(static_cast<std::ptrdiff_t>(cores));
  const auto copy_slice = [&](std::size_t i) {
    const std::size_t begin = std::min(bytes, i * slice), end = std::min(bytes, begin + slice);
    std::memcpy(dst.data() + begin, src.data() + begin, end - begin);
  };
  std::vector<std::jthread> helpers;
  for (std::size_t i = 1; i < cores; ++i)
    helpers.emplace_back([&, i] {
      for (;;) {
        start.arrive_and_wait();
        if (stop) return;
        copy_slice(i);
        done.arrive_and_wait();
      }
    });
  const auto once = [&] {
    start.arrive_and_wait();
    copy_slice(0);
    done.arrive_and_wait();
  };
  once();  // first touch outside the timing
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  stop = true;
  start.arrive_and_wait();
  benchmark::DoNotOptimize(dst.data());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(bytes));
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["threads"] = static_cast<double>(cores);
}
}  // namespace

void register_memcpy() {
  std::vector<std::size_t> chosen = sizes();
  if (profile() == Profile::smoke) chosen = {std::size_t{1} << 20, std::size_t{64} << 20};
  for (std::size_t bytes : chosen) {
    add_benchmark("memcpy/bytes:" + std::to_string(bytes),
                  [bytes](benchmark::State& state) { copy_benchmark(state, bytes); });
    add_benchmark("memcpy_parallel/bytes:" + std::to_string(bytes),
                  [bytes](benchmark::State& state) { parallel_copy_benchmark(state, bytes); });
  }
}

}  // namespace dist::bench
