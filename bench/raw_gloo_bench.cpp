// The baseline of the gloo backend: the same operations through Gloo's own API, without our
// layer (no validation, fingerprints or error mapping), on the Gloo context of the world's own
// backend (so both sides use the same connections and device threads), alone and call by call
// alternating with ours.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/context.h>
#include <gloo/math.h>
#include <gloo/reduce.h>

#include <exception>
#include <stdexcept>
#include <thread>

#include "bench/harness.hpp"
#include "bench/register.hpp"
#include "core/calls/call_layer.hpp"
#include "core/context.hpp"
#include "dist/dist.hpp"
#include "real/gloo/backend.hpp"

namespace dist::bench {

namespace {

// A rank's baseline: its world's Gloo context (the same connections and device our backend uses),
// with tags of its own, far above the backend's sequence numbers.
struct RawRank {
  std::shared_ptr<::gloo::Context> context;
  std::uint32_t tag = 1u << 30;
};
}  // namespace

struct RawGlooRanks {
  std::vector<RawRank> ranks;
};

namespace {
RawRank& raw_rank(BenchWorld& world, int rank) {
  return world.raw_gloo()->ranks[static_cast<std::size_t>(rank)];
}

void sum_floats(void* c, const void* a, const void* b, std::size_t n) {
  ::gloo::sum<float>(c, a, b, n);
}

using RawCall = void (*)(RawRank& r, RankBuffers& b, int n, std::size_t count);

struct RawSpec {
  std::string name;
  bool chunked;
  RawCall call;
};

const std::vector<RawSpec>& raw_specs() {
  static const std::vector<RawSpec> specs = {
      {"all_reduce", false,
       [](RawRank& r, RankBuffers& b, int, std::size_t c) {
         ::gloo::AllreduceOptions opts(r.context);
         opts.setOutput(b.in.data(), c);
         opts.setReduceFunction(sum_floats);
         opts.setTag(++r.tag);
         ::gloo::allreduce(opts);
       }},
      {"broadcast", false,
       [](RawRank& r, RankBuffers& b, int, std::size_t c) {
         ::gloo::BroadcastOptions opts(r.context);
         opts.setOutput(b.in.data(), c);
         opts.setRoot(0);
         opts.setTag(++r.tag);
         ::gloo::broadcast(opts);
       }},
      {"all_gather", true,
       [](RawRank& r, RankBuffers& b, int n, std::size_t c) {
         ::gloo::AllgatherOptions opts(r.context);
         opts.setInput(b.in.data(), c);
         opts.setOutput(b.out.data(), c * static_cast<std::size_t>(n));
         opts.setTag(++r.tag);
         ::gloo::allgather(opts);
       }},
  };
  return specs;
}

void register_raw(int n, const RawSpec& spec, std::size_t bytes, const RankCall& ours) {
  const std::size_t floats = std::max<std::size_t>(1, bytes / sizeof(float));
  const std::size_t count =
      spec.chunked ? std::max<std::size_t>(1, floats / static_cast<std::size_t>(n)) : floats;
  const std::size_t largest = spec.chunked ? count * static_cast<std::size_t>(n) : count;
  const std::string tail = "/ranks:" + std::to_string(n) + "/bytes:" + std::to_string(bytes);
  const auto ready = [largest, n]() -> BenchWorld& {
    BenchWorld& world = world_for(Backend::gloo, n);
    world.run([&](int rank) { world.buffers(rank).reserve(largest, largest, rank); });
    return world;
  };
  const auto raw_call = [spec, n, count](BenchWorld& world) {
    return [&world, spec, n, count](int rank) {
      spec.call(raw_rank(world, rank), world.buffers(rank), n, count);
    };
  };
  const double moved = static_cast<double>(largest * sizeof(float));
  add_benchmark(spec.name + "/raw_gloo" + tail, [=](benchmark::State& state) {
    BenchWorld& world = ready();
    measure(state, world, raw_call(world), moved, spec.name);
  });
  add_benchmark(
      spec.name + "/gloo_vs_raw" + tail,
      [=](benchmark::State& state) {
        BenchWorld& world = ready();
        measure_pair(
            state, world,
            [&world, ours, n, count](int rank) { ours(world.buffers(rank), rank, n, count); },
            raw_call(world), moved, spec.name);
      },
      pair_min_time_s());
  // The control of the method: raw Gloo against itself must read 1.00.
  if (spec.name == "all_reduce" && bytes == std::size_t{1} << 20)
    add_benchmark(
        spec.name + "/raw_vs_raw" + tail,
        [=](benchmark::State& state) {
          BenchWorld& world = ready();
          measure_pair(state, world, raw_call(world), raw_call(world), moved, spec.name);
        },
        pair_min_time_s());
}

}  // namespace

std::shared_ptr<RawGlooRanks> make_raw_gloo_ranks(int n) {
  auto ranks = std::make_shared<RawGlooRanks>();
  ranks->ranks.resize(static_cast<std::size_t>(n));
  return ranks;
}

void with_raw_gloo(RawGlooRanks* ranks, int rank, const std::function<void()>& body) {
  if (!ranks) {  // not a gloo world (nccl): no raw baseline to hold
    body();
    return;
  }
  const auto* context = core::current_context();
  auto* gloo =
      context && context->world && context->world->backend
          ? dynamic_cast<real::GlooBackend*>(&core::without_call_layer(*context->world->backend))
          : nullptr;
  if (!gloo) throw std::runtime_error("bench: a gloo world's rank has no gloo backend");
  RawRank& mine = ranks->ranks[static_cast<std::size_t>(rank)];
  mine.context = gloo->gloo_context();
  struct Release {
    RawRank& r;
    ~Release() { r.context.reset(); }
  } release{mine};
  body();
}

void register_raw_twin(const std::string& op, int n, std::size_t bytes, const RankCall& ours) {
  for (const auto& spec : raw_specs())
    if (spec.name == op) register_raw(n, spec, bytes, ours);
}

void register_raw_barrier(int n) {
  const auto raw_barrier = [](BenchWorld& world) {
    return [&world](int rank) {
      RawRank& r = raw_rank(world, rank);
      ::gloo::BarrierOptions opts(r.context);
      opts.setTag(++r.tag);
      ::gloo::barrier(opts);
    };
  };
  const std::string ranks = "/ranks:" + std::to_string(n);
  add_benchmark("barrier/raw_gloo" + ranks, [=](benchmark::State& state) {
    BenchWorld& world = world_for(Backend::gloo, n);
    measure(state, world, raw_barrier(world), 0, "");
  });
  add_benchmark(
      "barrier/gloo_vs_raw" + ranks,
      [=](benchmark::State& state) {
        BenchWorld& world = world_for(Backend::gloo, n);
        measure_pair(state, world, [](int) { dist::barrier(); }, raw_barrier(world), 0, "");
      },
      pair_min_time_s());
}

}  // namespace dist::bench
