// Benchmarks a data-parallel training step (a fake 1 MiB gradient, all_reduce mean, SGD update)
// with <dist/benchmark.hpp>: on 2 and 4 simulated ranks and on 2 gloo processes, each iteration
// timed by its slowest rank, with algbw/busbw for the gradient's all_reduce.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <dist/benchmark.hpp>
#include <dist/dist.hpp>
#include <dist/init.hpp>
#include <vector>

namespace {

constexpr std::size_t params = (1 << 20) / sizeof(float);  // 1 MiB of float32 parameters

// One rank's step; each rank runs its own copy of the lambda (its weights and gradient).
auto train_step =
    [weights = std::vector<float>(params, 0.5f), grad = std::vector<float>(params)]() mutable {
  const float rank = static_cast<float>(dist::get_rank());
  for (std::size_t i = 0; i < params; ++i) grad[i] = 0.01f * (weights[i] - rank);  // "backward"
  dist::all_reduce(grad, dist::ReduceOp::mean);
  for (std::size_t i = 0; i < params; ++i) weights[i] -= 0.1f * grad[i];  // SGD
};

}  // namespace

int main(int argc, char** argv) {
  using dist::bench::Options;
  constexpr std::size_t bytes = params * sizeof(float);
  constexpr auto pattern = dist::bench::Pattern::all_reduce;
  for (const int ranks : {2, 4})
    dist::bench::register_distributed("dp_step", train_step,
                                      {.ranks = ranks, .bytes = bytes, .pattern = pattern})
        ->Unit(benchmark::kMillisecond);
  if (dist::is_gloo_available())
    dist::bench::register_distributed("dp_step", train_step,
                                      {.ranks = 2,
                                       .on = Options::On::processes,
                                       .backend = dist::Backend::gloo,
                                       .bytes = bytes,
                                       .pattern = pattern})
        ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
