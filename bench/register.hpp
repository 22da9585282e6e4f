// The benchmark families of dist_bench and the one way they are registered (manual time of the
// slowest rank, microseconds, the profile's minimum time).
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <string>

#include "bench/harness.hpp"

namespace dist::bench {

// Registers `fn` as benchmark `name` with the suite's common settings (min_time_s() unless
// `min_time` is given).
void add_benchmark(const std::string& name, std::function<void(benchmark::State&)> fn,
                   double min_time = 0);
// The same with a fixed count of iterations instead of a minimum time (slow set-ups: a world).
void add_fixed_benchmark(const std::string& name, std::function<void(benchmark::State&)> fn,
                         int iterations);

void register_collectives(Backend backend);  // collectives_bench.cpp
void register_helpers(Backend backend);      // helpers_bench.cpp
// raw_gloo_bench.cpp (gloo builds only; no-ops elsewhere): Gloo's own call for `op` (all_reduce,
// broadcast, all_gather; others are ignored), registered right after ours, and the pair
// `op/gloo_vs_raw/...` that alternates `ours` (the gloo backend's call, on rank buffers holding
// `count` elements per rank or per chunk) with it (measure_pair); for all_reduce of 1 MiB also
// the method's control, all_reduce/raw_vs_raw/..., raw Gloo paired with itself.
using RankCall = std::function<void(RankBuffers& b, int rank, int n, std::size_t count)>;
void register_raw_twin(const std::string& op, int n, std::size_t bytes, const RankCall& ours);
void register_raw_barrier(int n);  // raw Gloo's barrier and barrier/gloo_vs_raw
// layer_pairs_bench.cpp (real backends): all_reduce 8 B and barrier through the call layer against
// the same call on the backend under it, alternated (<op>/<backend>_layer_vs_none/ranks:N...).
void register_layer_pairs(Backend backend, int n);
void register_memcpy();                      // memcpy_bench.cpp
// raw_nccl_bench.cpp (nccl builds only; a no-op elsewhere): NCCL's own all_reduce on blocking and
// non-blocking communicators, dist's backend below the one-rank shortcut, and a world's cost.
void register_raw_nccl();

}  // namespace dist::bench
