// The tensor collectives on every backend, world size and message size, in place and out of place
// where the API has both. Sizes follow nccl-tests: the bytes of the largest buffer of the call.
#include <map>
#include <span>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "bench/register.hpp"
#include "dist/dist.hpp"

namespace dist::bench {

namespace {

// One collective: how many float elements each rank's buffers hold for `bytes`, and the call.
struct CollectiveSpec {
  std::string name;   // the op name of bus_factor
  std::string label;  // the benchmark's name (name, or name_inplace)
  bool chunked;       // the largest buffer holds n chunks (all_gather, reduce_scatter, ...)
  void (*call)(RankBuffers& b, int rank, int n, std::size_t count);
};

std::span<float> head(std::vector<float>& v, std::size_t count) { return {v.data(), count}; }
std::span<float> chunk(std::vector<float>& v, int index, std::size_t count) {
  return {v.data() + static_cast<std::size_t>(index) * count, count};
}

const std::vector<CollectiveSpec>& collectives() {
  static const std::vector<CollectiveSpec> specs = {
      {"all_reduce", "all_reduce", false,
       [](RankBuffers& b, int, int, std::size_t c) { dist::all_reduce(head(b.in, c)); }},
      {"broadcast", "broadcast", false,
       [](RankBuffers& b, int, int, std::size_t c) { dist::broadcast(head(b.in, c), 0); }},
      {"reduce", "reduce", false,
       [](RankBuffers& b, int, int, std::size_t c) { dist::reduce(head(b.in, c), 0); }},
      {"all_gather", "all_gather", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
         dist::all_gather_async(head(b.out, c * static_cast<std::size_t>(n)), head(b.in, c)).wait();
       }},
      {"all_gather", "all_gather_inplace", true,
       [](RankBuffers& b, int rank, int n, std::size_t c) {
         auto out = head(b.out, c * static_cast<std::size_t>(n));
         dist::all_gather_async(out, chunk(b.out, rank, c)).wait();
       }},
      {"reduce_scatter", "reduce_scatter", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
         dist::reduce_scatter(head(b.out, c), head(b.in, c * static_cast<std::size_t>(n)));
       }},
      {"reduce_scatter", "reduce_scatter_inplace", true,
       [](RankBuffers& b, int rank, int n, std::size_t c) {
         dist::reduce_scatter(chunk(b.in, rank, c), head(b.in, c * static_cast<std::size_t>(n)));
       }},
      {"gather", "gather", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
         dist::gather_async(head(b.out, c * static_cast<std::size_t>(n)), head(b.in, c), 0).wait();
       }},
      {"scatter", "scatter", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
         dist::scatter(head(b.out, c), head(b.in, c * static_cast<std::size_t>(n)), 0);
       }},
      {"all_to_all", "all_to_all", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
         const std::size_t total = c * static_cast<std::size_t>(n);
         dist::all_to_all(head(b.out, total), head(b.in, total));
       }},
  };
  return specs;
}

// The sizes a collective runs at: the smoke profile keeps all_reduce's three target sizes and
// one middle size for the others.
std::vector<std::size_t> sizes_for(const CollectiveSpec& spec) {
  if (profile() == Profile::full || spec.label == "all_reduce") return sizes();
  return {std::size_t{1} << 20};
}

void register_collective(Backend backend, int n, const CollectiveSpec& spec, std::size_t bytes) {
  // Elements per rank (plain) or per chunk (chunked), at least one.
  const std::size_t floats = std::max<std::size_t>(1, bytes / sizeof(float));
  const std::size_t count =
      spec.chunked ? std::max<std::size_t>(1, floats / static_cast<std::size_t>(n)) : floats;
  const std::size_t largest = spec.chunked ? count * static_cast<std::size_t>(n) : count;
  const std::string name = spec.label + "/" + backend_name(backend) + "/ranks:" +
                           std::to_string(n) + "/bytes:" + std::to_string(bytes);
  add_benchmark(name, [=](benchmark::State& state) {
    BenchWorld& world = world_for(backend, n);
    world.run([&](int rank) { world.buffers(rank).reserve(largest, spec.chunked ? largest : 0, rank); });
    measure(state, world,
            [&world, spec, n, count](int rank) { spec.call(world.buffers(rank), rank, n, count); },
            static_cast<double>(largest * sizeof(float)), spec.name);
  });
}

}  // namespace

void register_collectives(Backend backend) {
  std::vector<int> ns = world_sizes();
  if (backend == Backend::gloo && profile() == Profile::smoke) ns = {2, 4};
  for (int n : ns)
    for (const auto& spec : collectives())
      for (std::size_t bytes : sizes_for(spec)) {
        register_collective(backend, n, spec, bytes);
        if (backend == Backend::gloo && spec.label == spec.name) register_raw_twin(spec.name, n, bytes);
      }
}

}  // namespace dist::bench
