// The cost of the call layer (core/calls: call numbering, the flight recorder, the cross-check's
// hash) on a real backend whose ranks are threads: the same backend call made through the layer
// and on the backend under it, alternated call by call on one world (measure_pair).
#include <algorithm>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "bench/layer_sides.hpp"
#include "bench/register.hpp"

namespace dist::bench {

namespace {

// A call of one side on a rank's buffers holding `count` floats.
using SideCall = void (*)(const LayerSide& side, RankBuffers& b, std::size_t count);

// The pair "<op>/<backend>_layer_vs_none/ranks:N<tail>": `call` through the layer against the
// same call under it; or its control, "<op>/<backend>_none_vs_none/...", the call under the layer
// against itself, which must read 1.00.
void add_layer_pair(Backend backend, int n, const std::string& op, const std::string& tail,
                    double bytes, SideCall call, bool control = false) {
  const std::string name = op + "/" + std::string(to_string(backend)) +
                           (control ? "_none_vs_none" : "_layer_vs_none") +
                           "/ranks:" + std::to_string(n) + tail;
  add_benchmark(
      name,
      [=](benchmark::State& state) {
    BenchWorld& world = world_for(backend, n);
    const auto floats = std::max<std::size_t>(1, static_cast<std::size_t>(bytes) / sizeof(float));
    std::vector<LayerSides> sides(static_cast<std::size_t>(n));
    world.run([&](int rank) {
      world.buffers(rank).reserve(floats, 0, rank);
      sides[static_cast<std::size_t>(rank)] = layer_sides();
    });
    const auto through = [&](bool on) {
      return [&world, &sides, call, floats, on](int rank) {
        const LayerSides& mine = sides[static_cast<std::size_t>(rank)];
        call(on ? mine.on : mine.off, world.buffers(rank), floats);
      };
    };
    measure_pair(state, world, through(!control), through(false), bytes, op);
      },
      pair_min_time_s());
}

}  // namespace

void register_layer_pairs(Backend backend, int n) {
  const SideCall all_reduce = [](const LayerSide& side, RankBuffers& b, std::size_t count) {
    side.all_reduce(b.in_ref(0, count));
  };
  add_layer_pair(backend, n, "all_reduce", "/bytes:8", 8, all_reduce);
  add_layer_pair(backend, n, "all_reduce", "/bytes:8", 8, all_reduce, true);
  add_layer_pair(backend, n, "barrier", "", 0,
                 [](const LayerSide& side, RankBuffers&, std::size_t) { side.barrier(); });
}

}  // namespace dist::bench
