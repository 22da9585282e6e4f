// nccl-tests' bus bandwidth: busbw = algbw × a factor of the collective and the world size, the
// one formula that <dist/benchmark.hpp> and the benchmark suite (bench/) both report with.
#pragma once

#include <string_view>

namespace dist::bench {

// The communication pattern of a benchmarked step, for its busbw counter (none: algbw only).
enum class Pattern { none, all_reduce, all_gather, reduce_scatter, broadcast, reduce };

// The factor that turns algbw (bytes / time) into busbw for `n` ranks (nccl-tests'
// PERFORMANCE.md): all_reduce 2(n-1)/n; all_gather, reduce_scatter (and gather, scatter,
// all_to_all) (n-1)/n; broadcast, reduce 1. Pattern::none: 1.
constexpr double busbw_factor(Pattern pattern, int n) {
  const double r = static_cast<double>(n);
  switch (pattern) {
    case Pattern::all_reduce: return 2.0 * (r - 1) / r;
    case Pattern::all_gather:
    case Pattern::reduce_scatter: return (r - 1) / r;
    case Pattern::none:
    case Pattern::broadcast:
    case Pattern::reduce: return 1.0;
  }
  return 1.0;
}

// The same by operation name ("all_reduce", "broadcast", "reduce"; any other name, such as
// "all_gather", "gather", "scatter" or "all_to_all", counts as (n-1)/n).
constexpr double busbw_factor(std::string_view op, int n) {
  if (op == "all_reduce") return busbw_factor(Pattern::all_reduce, n);
  if (op == "broadcast" || op == "reduce") return busbw_factor(Pattern::broadcast, n);
  return busbw_factor(Pattern::all_gather, n);
}

}  // namespace dist::bench
