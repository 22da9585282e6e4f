// The benchmark families of dist_bench and the one way they are registered (manual time of the
// slowest rank, microseconds, the profile's minimum time).
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <string>

#include "bench/harness.hpp"

namespace dist::bench {

// Registers `fn` as benchmark `name` with the suite's common settings.
void add_benchmark(const std::string& name, std::function<void(benchmark::State&)> fn);

void register_collectives(Backend backend);  // collectives_bench.cpp
void register_helpers(Backend backend);      // helpers_bench.cpp
// raw_gloo_bench.cpp (gloo builds only): Gloo's own call for `op` (all_reduce, broadcast,
// all_gather; others are ignored), registered right after ours so the two run close in time.
void register_raw_twin(const std::string& op, int n, std::size_t bytes);
void register_raw_barrier(int n);
void register_memcpy();                      // memcpy_bench.cpp

}  // namespace dist::bench
