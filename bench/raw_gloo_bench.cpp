// The baseline of the gloo backend: the same operations through Gloo's own API, without our
// layer (no validation, fingerprints or error mapping), ranks as threads over loopback TCP.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/transport/tcp/device.h>

#include <exception>
#include <stdexcept>
#include <thread>

#include "bench/harness.hpp"
#include "bench/register.hpp"

namespace dist::bench {

namespace {

struct RawRank {
  std::shared_ptr<::gloo::Context> context;
  std::uint32_t tag = 0;
};
std::vector<RawRank> raw_ranks;  // by rank, while a raw_gloo world runs

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

void register_raw(int n, const RawSpec& spec, std::size_t bytes) {
  const std::size_t floats = std::max<std::size_t>(1, bytes / sizeof(float));
  const std::size_t count =
      spec.chunked ? std::max<std::size_t>(1, floats / static_cast<std::size_t>(n)) : floats;
  const std::size_t largest = spec.chunked ? count * static_cast<std::size_t>(n) : count;
  const std::string name = spec.name + "/raw_gloo/ranks:" + std::to_string(n) +
                           "/bytes:" + std::to_string(bytes);
  add_benchmark(name, [=](benchmark::State& state) {
    BenchWorld& world = world_for(Backend::raw_gloo, n);
    world.run([&](int rank) { world.buffers(rank).reserve(largest, largest, rank); });
    measure(state, world,
            [&world, spec, n, count](int rank) {
              spec.call(raw_ranks[static_cast<std::size_t>(rank)], world.buffers(rank), n, count);
            },
            static_cast<double>(largest * sizeof(float)), spec.name);
  });
}

}  // namespace

void run_raw_gloo_ranks(int n, std::chrono::milliseconds timeout,
                        const std::function<void(int rank)>& fn) {
  ::gloo::rendezvous::HashStore store;
  raw_ranks.assign(static_cast<std::size_t>(n), {});
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  {
    std::vector<std::jthread> threads;
    for (int rank = 0; rank < n; ++rank)
      threads.emplace_back([&, rank] {
        try {
          ::gloo::transport::tcp::attr attr;
          attr.hostname = "127.0.0.1";
          auto device = ::gloo::transport::tcp::CreateDevice(attr);
          auto context = std::make_shared<::gloo::rendezvous::Context>(rank, n);
          context->setTimeout(timeout);
          context->connectFullMesh(store, device);
          raw_ranks[static_cast<std::size_t>(rank)].context = context;
          fn(rank);
          raw_ranks[static_cast<std::size_t>(rank)].context.reset();
        } catch (...) {
          errors[static_cast<std::size_t>(rank)] = std::current_exception();
        }
      });
  }
  raw_ranks.clear();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

void register_raw_twin(const std::string& op, int n, std::size_t bytes) {
  for (const auto& spec : raw_specs())
    if (spec.name == op) register_raw(n, spec, bytes);
}

void register_raw_barrier(int n) {
  add_benchmark("barrier/raw_gloo/ranks:" + std::to_string(n), [n](benchmark::State& state) {
    BenchWorld& world = world_for(Backend::raw_gloo, n);
    measure(state, world, [](int rank) {
      RawRank& r = raw_ranks[static_cast<std::size_t>(rank)];
      ::gloo::BarrierOptions opts(r.context);
      opts.setTag(++r.tag);
      ::gloo::barrier(opts);
    }, 0, "");
  });
}

}  // namespace dist::bench
