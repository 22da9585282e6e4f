// The node's copy rate for dist_calibrate: every core copying at once.
#include "tools/calibrate/copy_rate.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "dist/errors.hpp"

namespace dist::calibrate {

namespace {
using Clock = std::chrono::steady_clock;
constexpr std::size_t buffer_bytes = std::size_t{64} << 20;  // past any cache
constexpr int copies = 4;                                    // per thread and run

// One run: seconds from the common start until the last thread is done.
double one_run(std::vector<std::vector<char>>& from, std::vector<std::vector<char>>& to) {
  const int n = static_cast<int>(from.size());
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<Clock::time_point> done(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      const auto i = static_cast<std::size_t>(t);
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (int c = 0; c < copies; ++c) std::memcpy(to[i].data(), from[i].data(), buffer_bytes);
      done[i] = Clock::now();
    });
  while (ready.load() < n) std::this_thread::yield();
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  const auto last = *std::max_element(done.begin(), done.end());
  return std::chrono::duration<double>(last - start).count();
}
}  // namespace

double measure_node_copy_gbps(int threads) {
  if (threads < 1)
    throw InvalidArgument(
        "dist_calibrate: measuring the node's copy rate needs at least one "
        "thread, got " +
        std::to_string(threads));
  std::vector<std::vector<char>> from, to;
  try {
    for (int t = 0; t < threads; ++t) {
      from.emplace_back(buffer_bytes, static_cast<char>(t + 1));  // written: paged in
      to.emplace_back(buffer_bytes, 0);
    }
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::backend,
                "dist_calibrate: measuring the node's copy rate: no memory for " +
                    std::to_string(2 * threads) + " buffers of 64 MiB");
  }
  double fastest = 0;
  for (int run = 0; run < 3; ++run) {
    const double s = one_run(from, to);
    if (fastest == 0 || s < fastest) fastest = s;
  }
  const double bytes = static_cast<double>(buffer_bytes) * copies * threads;
  return bytes / fastest / 1e9;
}

}  // namespace dist::calibrate
