// The tensor collectives on every backend, world size and message size, in place and out of place
// where the API has both. Sizes follow nccl-tests: the bytes of the largest buffer of the call.
#include <map>
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

// Each call is the public API's blocking form: the erased call it makes on its buffers, then
// wait(); here on buffer references, so the same table runs on host and on device buffers.
std::size_t all(int n, std::size_t c) { return c * static_cast<std::size_t>(n); }  // n chunks
std::size_t at(int rank, std::size_t c) { return static_cast<std::size_t>(rank) * c; }
const Group whole_world{};

const std::vector<CollectiveSpec>& collectives() {
  static const std::vector<CollectiveSpec> specs =
      {
          {"all_reduce", "all_reduce", false,
           [](RankBuffers& b, int, int, std::size_t c) {
    detail::all_reduce(b.in_ref(0, c), ReduceOp::sum, whole_world).wait();
           }},
          {"broadcast", "broadcast", false,
           [](RankBuffers& b, int, int, std::size_t c) {
    detail::broadcast(b.in_ref(0, c), 0, whole_world).wait();
           }},
                                           {"reduce", "reduce", false,
                                            [](RankBuffers& b, int, int, std::size_t c) {
    detail::reduce(b.in_ref(0, c), 0, ReduceOp::sum, whole_world).wait();
                                            }},
      {"all_gather", "all_gather", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
    detail::all_gather(b.out_ref(0, all(n, c)), b.in_ref(0, c), whole_world).wait();
       }},
      {"all_gather", "all_gather_inplace", true,
       [](RankBuffers& b, int rank, int n, std::size_t c) {
    detail::all_gather(b.out_ref(0, all(n, c)), b.out_ref(at(rank, c), c), whole_world).wait();
       }},
      {"reduce_scatter", "reduce_scatter", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
    detail::reduce_scatter(b.out_ref(0, c), b.in_ref(0, all(n, c)), ReduceOp::sum, whole_world)
        .wait();
       }},
      {"reduce_scatter", "reduce_scatter_inplace", true,
       [](RankBuffers& b, int rank, int n, std::size_t c) {
    detail::reduce_scatter(b.in_ref(at(rank, c), c), b.in_ref(0, all(n, c)), ReduceOp::sum,
                           whole_world)
        .wait();
       }},
      {"gather", "gather", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
    detail::gather(b.out_ref(0, all(n, c)), b.in_ref(0, c), 0, whole_world).wait();
       }},
      {"scatter", "scatter", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
    detail::scatter(b.out_ref(0, c), b.in_ref(0, all(n, c)), 0, whole_world).wait();
       }},
      {"all_to_all", "all_to_all", true,
       [](RankBuffers& b, int, int n, std::size_t c) {
    detail::all_to_all(b.out_ref(0, all(n, c)), b.in_ref(0, all(n, c)), whole_world).wait();
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
  const std::string name = spec.label + "/" + std::string(to_string(backend)) +
                           "/ranks:" + std::to_string(n) + "/bytes:" + std::to_string(bytes);
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
  for (int n : world_sizes_for(backend))
    for (const auto& spec : collectives())
      for (std::size_t bytes : sizes_for(spec)) {
        register_collective(backend, n, spec, bytes);
        if (backend == Backend::gloo && spec.label == spec.name)
          register_raw_twin(spec.name, n, bytes, spec.call);
        // On the world just made: the call layer's cost, layer on against off.
        if (backend != Backend::sim && spec.label == "all_reduce" && bytes == 8)
          register_layer_pairs(backend, n);
      }
}

}  // namespace dist::bench
