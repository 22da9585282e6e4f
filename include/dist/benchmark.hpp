// dist::benchmark's umbrella header: Google Benchmarks of a distributed step
// (<dist/bench/benchmark.hpp>) and nccl-tests' bus bandwidth (<dist/bench/bus_bandwidth.hpp>).
#pragma once

#include "dist/bench/benchmark.hpp"
#include "dist/bench/bus_bandwidth.hpp"
