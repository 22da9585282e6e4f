// The baseline of the nccl backend: NCCL's own all_reduce on communicators made here, one per
// GPU, driven from one thread inside ncclGroupStart/End (nccl-tests' single-thread mode), each
// call waited for, as ours are. Blocking and non-blocking communicators side by side: non-blocking
// is what dist uses (aborts stay bounded), and issue 21 asks what that mode costs per call. Also
// the cost of a world: NCCL's init and destroy alone against a dist world of one rank, made and
// closed.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/harness.hpp"
#include "bench/layer_sides.hpp"
#include "bench/register.hpp"

namespace dist::bench {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto call_deadline = std::chrono::seconds(60);

double seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("raw nccl: ") + what + ": " + cudaGetErrorString(e));
}
void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess && r != ncclInProgress)
    throw std::runtime_error(std::string("raw nccl: ") + what + ": " + ncclGetErrorString(r));
}

// Polls until every communicator has left ncclInProgress (non-blocking mode), with a deadline.
void settle(const std::vector<ncclComm_t>& comms, const char* what) {
  const auto deadline = Clock::now() + call_deadline;
  for (ncclComm_t comm : comms) {
    ncclResult_t state = ncclInProgress;
    while (true) {
      check(ncclCommGetAsyncError(comm, &state), what);
      if (state != ncclInProgress) break;
      if (Clock::now() > deadline)
        throw std::runtime_error(std::string("raw nccl: ") + what +
                                 " still in progress after 60 s");
      std::this_thread::yield();
    }
    check(state, what);
  }
}

// Polls `stream` until its work is done, with a deadline.
void drain(cudaStream_t stream, const char* what) {
  const auto deadline = Clock::now() + call_deadline;
  cudaError_t e;
  while ((e = cudaStreamQuery(stream)) == cudaErrorNotReady)
    if (Clock::now() > deadline)
      throw std::runtime_error(std::string("raw nccl: ") + what + " ran past 60 s");
  check(e, what);
}

// n ranks on GPUs 0..n-1: communicators, streams, and a buffer of `floats` per rank.
class RawNcclWorld {
 public:
  RawNcclWorld(int n, bool blocking, std::size_t floats)
      : n_(n), blocking_(blocking), floats_(floats) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = blocking ? 1 : 0;
    comms_.assign(static_cast<std::size_t>(n), nullptr);
    try {
      connect(config);
    } catch (...) {
      release(true);
      throw;
    }
  }
  ~RawNcclWorld() {
    try {
      release(false);
    } catch (...) {  // a destructor reports nothing: the communicators are aborted instead
      release(true);
    }
  }
  RawNcclWorld(const RawNcclWorld&) = delete;
  RawNcclWorld& operator=(const RawNcclWorld&) = delete;

  int size() const { return n_; }
  bool blocking() const { return blocking_; }
  std::size_t floats() const { return floats_; }

  // One all_reduce (sum, in place) of `count` floats on every rank, waited for.
  void all_reduce(std::size_t count) {
    if (n_ > 1) check(ncclGroupStart(), "ncclGroupStart");
    for (int r = 0; r < n_; ++r) {
      const auto i = static_cast<std::size_t>(r);
      check(ncclAllReduce(buffers_[i], buffers_[i], count, ncclFloat, ncclSum, comms_[i],
                          streams_[i]),
            "ncclAllReduce");
    }
    if (n_ > 1) check(ncclGroupEnd(), "ncclGroupEnd");
    if (!blocking_) settle(comms_, "ncclAllReduce");
    for (cudaStream_t s : streams_) drain(s, "an all_reduce");
  }

  // ncclCommFinalize then ncclCommDestroy of every rank; the seconds it took.
  double destroy() {
    if (comms_.empty()) return 0;
    const auto t0 = Clock::now();
    check(ncclGroupStart(), "ncclGroupStart");
    for (ncclComm_t c : comms_) check(ncclCommFinalize(c), "ncclCommFinalize");
    check(ncclGroupEnd(), "ncclGroupEnd (finalize)");
    settle(comms_, "finalize");
    for (ncclComm_t& c : comms_) {  // nulled first: a failed destroy is not aborted after
      const ncclComm_t gone = std::exchange(c, nullptr);
      check(ncclCommDestroy(gone), "ncclCommDestroy");
    }
    comms_.clear();
    return seconds(t0, Clock::now());
  }

  double init_s = 0;

 private:
  void connect(ncclConfig_t config) {
    ncclUniqueId id;
    check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const int n = n_;
    const std::size_t floats = floats_;
    const auto t0 = Clock::now();
    check(ncclGroupStart(), "ncclGroupStart");
    for (int r = 0; r < n; ++r) {
      check(cudaSetDevice(r), "cudaSetDevice");
      check(ncclCommInitRankConfig(&comms_[static_cast<std::size_t>(r)], n, id, r, &config),
            "ncclCommInitRankConfig");
    }
    check(ncclGroupEnd(), "ncclGroupEnd (init)");
    settle(comms_, "init");
    init_s = seconds(t0, Clock::now());
    for (int r = 0; r < n; ++r) {
      check(cudaSetDevice(r), "cudaSetDevice");
      cudaStream_t s = nullptr;
      check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
      streams_.push_back(s);
      void* b = nullptr;
      check(cudaMalloc(&b, std::max<std::size_t>(floats, 1) * sizeof(float)), "cudaMalloc");
      check(cudaMemset(b, 0, std::max<std::size_t>(floats, 1) * sizeof(float)), "cudaMemset");
      buffers_.push_back(static_cast<float*>(b));
      drain(cudaStreamLegacy, "zeroing the buffers");
    }
  }

  // Frees the buffers and streams, then closes the communicators (`abort`: ncclCommAbort, for a
  // world that failed or cannot finalize).
  void release(bool abort) {
    for (std::size_t r = 0; r < streams_.size(); ++r) {
      (void)cudaSetDevice(static_cast<int>(r));
      if (r < buffers_.size()) (void)cudaFree(buffers_[r]);
      (void)cudaStreamDestroy(streams_[r]);
    }
    buffers_.clear();
    streams_.clear();
    if (!abort) {
      (void)destroy();
      return;
    }
    for (ncclComm_t c : comms_)
      if (c) (void)ncclCommAbort(c);
    comms_.clear();
  }

  int n_;
  bool blocking_;
  std::size_t floats_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<float*> buffers_;
};

// The raw world in use, kept across the sizes of one (n, mode).
std::unique_ptr<RawNcclWorld> raw_world;

RawNcclWorld& raw_world_for(int n, bool blocking, std::size_t floats) {
  if (!raw_world || raw_world->size() != n || raw_world->blocking() != blocking ||
      raw_world->floats() < floats) {
    raw_world.reset();
    close_worlds();  // dist's world (its communicators and threads) stays out of the timings
    raw_world = std::make_unique<RawNcclWorld>(n, blocking, floats);
  }
  return *raw_world;
}

std::string mode_name(bool blocking) { return blocking ? "raw_nccl_blocking" : "raw_nccl"; }

void register_raw_all_reduce(int n, bool blocking, std::size_t bytes, std::size_t largest_floats) {
  const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
  add_benchmark("all_reduce/" + mode_name(blocking) + "/ranks:" + std::to_string(n) +
                    "/bytes:" + std::to_string(bytes),
                [=](benchmark::State& state) {
    RawNcclWorld& world = raw_world_for(n, blocking, largest_floats);
    world.all_reduce(count);  // warm-up
    double total = 0;
    for (auto _ : state) {
      const auto t0 = Clock::now();
      world.all_reduce(count);
      const double t = seconds(t0, Clock::now());
      state.SetIterationTime(t);
      total += t;
    }
    set_counters(state, n, static_cast<std::int64_t>(state.iterations()), total,
                 static_cast<double>(count * sizeof(float)), "all_reduce");
  });
}

// Makes and closes a world per iteration (`cycle` returns the seconds of each) with no other world
// open; the manual time is the making, and the counters init_ms and destroy_ms are the means.
template <class Cycle>
void time_worlds(benchmark::State& state, Cycle cycle) {
  raw_world.reset();
  close_worlds();
  double init = 0, destroy = 0;
  for (auto _ : state) {
    const auto [made, closed] = cycle();
    init += made;
    destroy += closed;
    state.SetIterationTime(made);
  }
  const auto k = static_cast<double>(state.iterations());
  state.counters["init_ms"] = init / k * 1e3;
  state.counters["destroy_ms"] = destroy / k * 1e3;
}

// The cost of a world, made and closed three times: NCCL's alone (init_ms, destroy_ms) and dist's.
void register_world_costs(int n) {
  for (bool blocking : {false, true})
    add_fixed_benchmark(
        "nccl_world/" + mode_name(blocking) + "/ranks:" + std::to_string(n),
        [=](benchmark::State& state) {
      time_worlds(state, [&] {
        RawNcclWorld world(n, blocking, 1);
        const double destroy = world.destroy();
        return std::pair{world.init_s, destroy};
      });
        },
        3);
  add_fixed_benchmark(
      "nccl_world/nccl/ranks:" + std::to_string(n),
      [=](benchmark::State& state) {
    time_worlds(state, [&] {
      const auto t0 = Clock::now();
      auto world = std::make_unique<BenchWorld>(Backend::nccl, n);
      const auto t1 = Clock::now();
      world.reset();
      return std::pair{seconds(t0, t1), seconds(t1, Clock::now())};
    });
      },
      3);
}

// dist's backend under its call layer and front end, on a world of one rank: the one-rank
// shortcut of dist's API answers without NCCL, so this is the call that reaches it.
void register_backend_call(std::size_t bytes) {
  const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
  add_benchmark("all_reduce/nccl_backend/ranks:1/bytes:" + std::to_string(bytes),
                [=](benchmark::State& state) {
    raw_world.reset();
    BenchWorld& world = world_for(Backend::nccl, 1);
    LayerSide side;
    world.run([&](int rank) {
      world.buffers(rank).reserve(count, 0, rank);
      side = layer_sides().off;
    });
    measure(
        state, world,
        [&world, &side, count](int rank) { side.all_reduce(world.buffers(rank).in_ref(0, count)); },
        static_cast<double>(count * sizeof(float)), "all_reduce");
  });
}
}  // namespace

void register_raw_nccl() {
  const std::vector<int> ns = world_sizes_for(Backend::nccl);
  const std::vector<std::size_t> bytes = sizes();
  const std::size_t largest = std::max<std::size_t>(1, bytes.back() / sizeof(float));
  for (int n : ns) {
    if (n == 1)
      for (std::size_t b : bytes) register_backend_call(b);
    for (bool blocking : {false, true})
      for (std::size_t b : bytes) register_raw_all_reduce(n, blocking, b, largest);
    register_world_costs(n);
  }
}

}  // namespace dist::bench
