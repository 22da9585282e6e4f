// BenchWorld (rank threads that wait for jobs), the timed batches with a start barrier, the
// profiles' sizes and the nccl-tests bandwidth factors.
#include "bench/harness.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "bench/register.hpp"
#include "bench/timing.hpp"
#include "dist/bench/bus_bandwidth.hpp"
#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "real/registry.hpp"
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

// The world in use. One at a time: an idle world's threads and buffers stay out of the next
// world's timings (a gloo world's raw Gloo baseline lives in the same world).
std::unique_ptr<BenchWorld> live_world;
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

double pair_min_time_s() {
  if (std::getenv("DIST_BENCH_MIN_TIME")) return min_time_s();  // by hand: one time for all
  return current_profile == Profile::smoke ? 0.3 : 1.0;
}

std::vector<int> world_sizes_for(Backend backend) {
  std::vector<int> ns = world_sizes();
  if (backend == Backend::sim) return ns;
  const auto& entry = dist::real::backend_entry(backend, "dist_bench");
  if (profile() == Profile::smoke) ns = {2, 4};
  std::erase_if(ns, [&](int n) { return !entry.unavailable(n).empty(); });
  if (ns.empty() && entry.unavailable(1).empty()) ns = {1};
  return ns;
}

#ifndef DIST_BENCH_HAVE_GLOO
struct RawGlooRanks {};
std::shared_ptr<RawGlooRanks> make_raw_gloo_ranks(int) { return nullptr; }
void with_raw_gloo(RawGlooRanks*, int, const std::function<void()>& body) {
  body();
}
void register_raw_twin(const std::string&, int, std::size_t, const RankCall&) {}
void register_raw_barrier(int) {}
#endif
#ifndef DIST_BENCH_HAVE_NCCL
void register_raw_nccl() {}
#endif

void RankBuffers::reserve(std::size_t in_count, std::size_t out_count, int rank) {
  const float value = static_cast<float>(rank + 1);
  if (device.is_cpu()) {
    if (in.size() < in_count) in.assign(in_count, value);
    if (out.size() < out_count) out.assign(out_count, 0.0f);
    return;
  }
  const auto elements = [](std::size_t count) {
    return std::vector<std::int64_t>{static_cast<std::int64_t>(std::max<std::size_t>(count, 1))};
  };
  if (device_in.numel() < in_count)
    device_in = Tensor::from(std::vector<float>(in_count, value)).to(device);
  if (device_out.numel() < out_count) device_out = Tensor::zeros(elements(out_count), DType::float32, device);
}

namespace {
detail::BufferRef ref_of(std::vector<float>& host, Tensor& on_device, Device device,
                         std::size_t offset, std::size_t count) {
  float* base = device.is_cpu() ? host.data() : static_cast<float*>(on_device.data());
  return {base + offset, count, DType::float32, device};
}
}  // namespace

detail::BufferRef RankBuffers::in_ref(std::size_t offset, std::size_t count) {
  return ref_of(in, device_in, device, offset, count);
}
detail::BufferRef RankBuffers::out_ref(std::size_t offset, std::size_t count) {
  return ref_of(out, device_out, device, offset, count);
}

BenchWorld::BenchWorld(Backend backend, int n)
    : backend_(backend),
      n_(n),
      buffers_(static_cast<std::size_t>(n)),
      raw_gloo_(backend == Backend::gloo ? make_raw_gloo_ranks(n) : nullptr),
      errors_(static_cast<std::size_t>(n)) {
  launcher_ = std::thread([this] {
    try {
      if (backend_ == Backend::sim) {
        dist::sim::Cluster cluster{.nodes = 1, .ranks_per_node = n_};
        cluster.timeout = rank_timeout;
        dist::sim::run(cluster, [this] { rank_loop(dist::get_rank()); });
      } else {
        dist::real::run_thread_world_or_throw(backend_, n_, rank_timeout, [this](int rank) {
          with_raw_gloo(raw_gloo_.get(), rank, [&] { rank_loop(rank); });
        });
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
  // Buffers live where the backend communicates (cpu, or this rank's GPU for nccl).
  buffers_[static_cast<std::size_t>(rank)].device = dist::get_comm_device();
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
  if (live_world && live_world->backend() == backend && live_world->size() == n) return *live_world;
  live_world.reset();  // its threads and buffers go first
  live_world = std::make_unique<BenchWorld>(backend, n);
  settle(*live_world);
  return *live_world;
}

void close_worlds() { live_world.reset(); }

void set_running_benchmark(const std::string& name) { running_benchmark = name; }

double bus_factor(const std::string& op, int n) { return busbw_factor(op, n); }

void set_counters(benchmark::State& state, int ranks, std::int64_t calls, double total,
                  double bytes, const std::string& op_name) {
  const double per_call = calls > 0 ? total / static_cast<double>(calls) : 0;
  state.counters["ranks"] = ranks;
  state.counters["calls"] = static_cast<double>(calls);
  if (bytes > 0 && per_call > 0) {
    const double algbw = bytes / per_call / 1e9;
    state.counters["algbw"] = algbw;
    state.counters["busbw"] = algbw * bus_factor(op_name, ranks);
    state.counters["bytes"] = bytes;
  }
}

namespace {
constexpr double batch_target_s = 2e-3;
constexpr int max_pair_reps = 2;

// The batch size of the running benchmark: sized on its first run, reused by its repetitions.
int batch_for(BenchWorld& world, const std::function<void(int)>& op) {
  auto [sized, fresh] = batch_sizes.try_emplace(running_benchmark, 0);
  if (fresh)
    sized->second = batch_size([&](int r) { return world.time_batch(op, r); }, batch_target_s);
  return sized->second;
}

}  // namespace

BenchWorld::PairTimes BenchWorld::time_alternating(const std::function<void(int)>& op,
                                                   const std::function<void(int)>& base, int reps,
                                                   bool base_first) {
  StartLine line(n_);
  std::vector<PairTimes> spent(static_cast<std::size_t>(n_));
  run([&](int rank) {
    PairTimes& mine = spent[static_cast<std::size_t>(rank)];
    line.arrive();
    // Untimed: the first call after the start line also waits for the ranks still arriving.
    (base_first ? base : op)(rank);
    auto t0 = Clock::now();
    for (int i = 0; i < 2 * reps; ++i) {
      // ours, base, base, ours, ours, base, ... (or the other way round from base_first)
      const bool ours = ((i % 2 == 0) == (i % 4 < 2)) != base_first;
      (ours ? op : base)(rank);
      const auto t1 = Clock::now();
      (ours ? mine.op_s : mine.base_s) += std::chrono::duration<double>(t1 - t0).count();
      t0 = t1;
    }
  });
  PairTimes slowest;
  for (const auto& s : spent) {
    slowest.op_s = std::max(slowest.op_s, s.op_s);
    slowest.base_s = std::max(slowest.base_s, s.base_s);
  }
  return slowest;
}

void measure(benchmark::State& state, BenchWorld& world, const std::function<void(int)>& op,
             double bytes, const std::string& op_name) {
  world.time_batch(op, 1);  // warm-up (first touch, connections; the world may be new)
  const int reps = batch_for(world, op);
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
  set_counters(state, world.size(), calls, total, bytes, op_name);
}

void measure_pair(benchmark::State& state, BenchWorld& world, const std::function<void(int)>& op,
                  const std::function<void(int)>& base, double bytes, const std::string& op_name) {
  world.time_alternating(op, base, 1, false);  // warm-up
  // At most two calls of each per batch: the median needs many batches, and a size taken in a
  // fast moment would otherwise leave 20 batches of a 3 ms barrier in 0.3 s.
  const int reps = std::min(batch_for(world, op), max_pair_reps);
  double total = 0, base_total = 0;
  std::int64_t calls = 0;
  std::vector<double> ratios;
  while (state.KeepRunningBatch(reps)) {
    const auto t = world.time_alternating(op, base, reps, ratios.size() % 2 == 1);
    state.SetIterationTime(t.op_s);
    total += t.op_s;
    base_total += t.base_s;
    calls += reps;
    ratios.push_back(t.op_s / std::max(t.base_s, 1e-12));
  }
  set_counters(state, world.size(), calls, total, bytes, op_name);
  if (ratios.empty()) return;
  const auto mid = ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2);
  std::nth_element(ratios.begin(), mid, ratios.end());
  state.counters["ratio"] = *mid;
  state.counters["ratio_total"] = total / std::max(base_total, 1e-12);
  state.counters["base_us"] = base_total / static_cast<double>(calls) * 1e6;
  state.counters["pairs"] = static_cast<double>(ratios.size());
}

}  // namespace dist::bench
