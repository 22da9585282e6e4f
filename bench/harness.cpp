// BenchWorld (rank threads that wait for jobs), the timed batches with a start barrier, the
// profiles' sizes and the nccl-tests bandwidth factors.
#include "bench/harness.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "bench/batch_size.hpp"
#include "dist/dist.hpp"
#include "dist/sim.hpp"
#include "real/testing.hpp"

namespace dist::bench {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto job_deadline = std::chrono::minutes(10);   // one batch of one benchmark
constexpr auto idle_deadline = std::chrono::hours(2);     // a rank waiting for its next job
constexpr auto rank_timeout = std::chrono::minutes(5);    // the backends' own timeout
constexpr auto settle_time = std::chrono::milliseconds(50);  // a new world's ranks spin (settle)

Profile current_profile = Profile::smoke;

// A start line for the ranks of a batch: the last to arrive records the start time and releases
// the others, who spin (yielding) until then or until the deadline.
class StartLine {
 public:
  explicit StartLine(int n) : n_(n) {}
  void arrive() {
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      start_ = Clock::now();
      go_.store(true, std::memory_order_release);
      return;
    }
    const auto deadline = Clock::now() + job_deadline;
    while (!go_.load(std::memory_order_acquire)) {
      if (Clock::now() > deadline) throw std::runtime_error("bench: a rank never reached the start");
      std::this_thread::yield();
    }
  }
  Clock::time_point start() const { return start_; }

 private:
  int n_;
  std::atomic<int> arrived_{0};
  std::atomic<bool> go_{false};
  Clock::time_point start_{};
};

// The batch size of every benchmark that has run, by name (see set_running_benchmark).
std::string running_benchmark;
std::map<std::string, int> batch_sizes;

// The two most recently used worlds (ours and its baseline stay up while they alternate).
std::vector<std::unique_ptr<BenchWorld>> live_worlds;
}  // namespace

Profile profile() { return current_profile; }
void set_profile(Profile p) { current_profile = p; }

std::vector<std::size_t> sizes() {
  constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;
  if (current_profile == Profile::smoke) return {8, MiB, 64 * MiB};
  return {8, 64, 512, 4 * KiB, 32 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB};
}

std::vector<int> world_sizes() { return {2, 4, 8}; }

double min_time_s() {
  if (const char* env = std::getenv("DIST_BENCH_MIN_TIME")) return std::atof(env);  // by hand
  return current_profile == Profile::smoke ? 0.02 : 0.2;
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::sim: return "sim";
    case Backend::gloo: return "gloo";
    case Backend::raw_gloo: return "raw_gloo";
  }
  return "?";
}

#ifdef DIST_BENCH_HAVE_GLOO
bool gloo_available() { return true; }
#else
bool gloo_available() { return false; }
void run_raw_gloo_ranks(int, std::chrono::milliseconds, const std::function<void(int)>&) {
  throw std::runtime_error("bench: built without gloo");
}
#endif

void RankBuffers::reserve(std::size_t in_count, std::size_t out_count, int rank) {
  const float value = static_cast<float>(rank + 1);
  if (in.size() < in_count) in.assign(in_count, value);
  if (out.size() < out_count) out.assign(out_count, 0.0f);
}

BenchWorld::BenchWorld(Backend backend, int n)
    : backend_(backend), n_(n), buffers_(static_cast<std::size_t>(n)),
      errors_(static_cast<std::size_t>(n)) {
  launcher_ = std::thread([this] {
    try {
      if (backend_ == Backend::sim) {
        dist::sim::Cluster cluster{.nodes = 1, .ranks_per_node = n_};
        cluster.timeout = rank_timeout;
        dist::sim::run(cluster, [this] { rank_loop(dist::get_rank()); });
      } else if (backend_ == Backend::raw_gloo) {
        run_raw_gloo_ranks(n_, rank_timeout, [this](int rank) { rank_loop(rank); });
      } else {
        dist::real::run_ranks_or_throw(dist::Backend::gloo, n_, rank_timeout,
                                       [this](int rank) { rank_loop(rank); });
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      launch_error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    stop_ = true;  // no rank takes jobs any more
    cv_.notify_all();
  });
  try {
    run([](int) {});  // every rank is up (gloo: connected)
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    cv_.notify_all();
    launcher_.join();
    throw;
  }
}

BenchWorld::~BenchWorld() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    ++generation_;
  }
  cv_.notify_all();
  launcher_.join();
}

void BenchWorld::rank_loop(int rank) {
  std::uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!cv_.wait_for(lock, idle_deadline, [&] { return stop_ || generation_ != seen; })) return;
    if (stop_) return;
    seen = generation_;
    const auto* job = job_;
    lock.unlock();
    try {
      (*job)(rank);
    } catch (...) {
      errors_[static_cast<std::size_t>(rank)] = std::current_exception();
    }
    lock.lock();
    if (++done_ == n_) cv_.notify_all();
  }
}

void BenchWorld::run(const std::function<void(int rank)>& job) {
  std::unique_lock lock(mutex_);
  if (stop_) {
    if (launch_error_) std::rethrow_exception(launch_error_);
    throw std::runtime_error("bench: the world has stopped");
  }
  job_ = &job;
  done_ = 0;
  std::fill(errors_.begin(), errors_.end(), nullptr);
  ++generation_;
  cv_.notify_all();
  if (!cv_.wait_for(lock, job_deadline, [&] { return done_ == n_ || stop_; }))
    throw std::runtime_error("bench: a job did not finish within 10 minutes");
  job_ = nullptr;
  if (done_ != n_) {
    if (launch_error_) std::rethrow_exception(launch_error_);
    throw std::runtime_error("bench: the world stopped during a job");
  }
  for (const auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

double BenchWorld::time_batch(const std::function<void(int rank)>& op, int reps) {
  StartLine line(n_);
  std::vector<Clock::time_point> ends(static_cast<std::size_t>(n_));
  run([&](int rank) {
    line.arrive();
    for (int i = 0; i < reps; ++i) op(rank);
    ends[static_cast<std::size_t>(rank)] = Clock::now();
  });
  const auto last = *std::max_element(ends.begin(), ends.end());
  return std::chrono::duration<double>(last - line.start()).count();
}

// A new world's rank threads start wherever the OS put them, often several on one core, and are
// spread over the cores only as the load balancer notices them busy. They spin for a while before
// anything is timed, as the baselines' long-running processes have settled by then: otherwise
// the first benchmark of a world measures the placement (measured: all_reduce 8 B, 2 ranks,
// 1.7-2.7 us first in a fresh world against 1.2-1.4 us after).
namespace {
void settle(BenchWorld& world) {
  world.run([](int) {
    const auto until = Clock::now() + settle_time;
    while (Clock::now() < until) {
    }
  });
}
}  // namespace

BenchWorld& world_for(Backend backend, int n) {
  for (std::size_t i = 0; i < live_worlds.size(); ++i)
    if (live_worlds[i]->backend() == backend && live_worlds[i]->size() == n) {
      std::rotate(live_worlds.begin() + static_cast<std::ptrdiff_t>(i),
                  live_worlds.begin() + static_cast<std::ptrdiff_t>(i) + 1, live_worlds.end());
      return *live_worlds.back();
    }
  if (live_worlds.size() >= 2) live_worlds.erase(live_worlds.begin());  // threads, buffers go first
  live_worlds.push_back(std::make_unique<BenchWorld>(backend, n));
  settle(*live_worlds.back());
  return *live_worlds.back();
}

void close_worlds() { live_worlds.clear(); }

void set_running_benchmark(const std::string& name) { running_benchmark = name; }

double bus_factor(const std::string& op, int n) {
  const double r = static_cast<double>(n);
  if (op == "all_reduce") return 2.0 * (r - 1) / r;
  if (op == "broadcast" || op == "reduce") return 1.0;
  return (r - 1) / r;  // all_gather, reduce_scatter, gather, scatter, all_to_all (nccl-tests)
}

void measure(benchmark::State& state, BenchWorld& world, const std::function<void(int)>& op,
             double bytes, const std::string& op_name) {
  constexpr double batch_target_s = 2e-3;
  world.time_batch(op, 1);  // warm-up (first touch, connections; the world may be new)
  auto [sized, fresh] = batch_sizes.try_emplace(running_benchmark, 0);
  if (fresh) {
    sized->second = batch_size([&](int r) { return world.time_batch(op, r); }, batch_target_s);
  }
  const int reps = sized->second;
  double total = 0;
  std::int64_t calls = 0;
  // Each loop of KeepRunningBatch counts `reps` iterations and one batch's time, so Google
  // Benchmark reports the time per call and plans its iteration count from the real time spent.
  while (state.KeepRunningBatch(reps)) {
    const double t = world.time_batch(op, reps);
    state.SetIterationTime(t);
    total += t;
    calls += reps;
  }
  const double per_call = calls > 0 ? total / static_cast<double>(calls) : 0;
  state.counters["ranks"] = world.size();
  state.counters["calls"] = static_cast<double>(calls);
  if (bytes > 0 && per_call > 0) {
    const double algbw = bytes / per_call / 1e9;
    state.counters["algbw"] = algbw;
    state.counters["busbw"] = algbw * bus_factor(op_name, world.size());
    state.counters["bytes"] = bytes;
  }
}

}  // namespace dist::bench
