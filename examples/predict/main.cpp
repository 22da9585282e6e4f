// Predicts a data-parallel training step on 1,024 H100 GPUs (dist::sim::dgx_h100(128)) before
// booking them: each rank's backward pass (modeled compute, dist::sim::advance) fills its
// gradients, which are then summed across the world by all_reduce, bucket by bucket. The step
// runs for real on 1,024 simulated ranks, with its data and its checks; the network model
// predicts its time. Prints each bucket size's predicted step and the busbw of every bucket.
//   usage: predict [--nodes N] [--params FLOATS] [--buckets KIB,KIB,...] [--layer-us US]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "dist/bus_bandwidth.hpp"
#include "dist/dist.hpp"
#include "dist/predict.hpp"

namespace {

struct Options {
  int nodes = 128;
  std::size_t params = std::size_t{1} << 19;  // floats of gradient per rank (2 MiB)
  std::vector<std::size_t> bucket_kib{128, 512};
  double layer_us = 150;  // backward compute of one of the model's 8 layers
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--nodes") o.nodes = std::atoi(value.c_str());
    else if (key == "--params") o.params = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "--layer-us") o.layer_us = std::atof(value.c_str());
    else if (key == "--buckets") {
      o.bucket_kib.clear();
      for (std::size_t at = 0; at < value.size();) {
        const auto comma = value.find(',', at);
        o.bucket_kib.push_back(std::strtoull(value.substr(at, comma - at).c_str(), nullptr, 10));
        at = comma == std::string::npos ? value.size() : comma + 1;
      }
    } else {
      std::fprintf(stderr, "predict: unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  if (o.nodes < 1 || o.params < 1 || o.bucket_kib.empty()) {
    std::fprintf(stderr, "predict: --nodes, --params and --buckets must be positive\n");
    std::exit(2);
  }
  return o;
}

struct Bucket {
  std::size_t bytes = 0;
  double us = 0;
};

struct Step {
  dist::sim::Prediction prediction;
  std::vector<Bucket> buckets;  // rank 0's view
  bool correct = true;
};

Step run_step(const Options& o, std::size_t bucket_floats) {
  dist::sim::Cluster cluster = dist::sim::dgx_h100(o.nodes);
  // The simulator's own CPU time is not the GPUs' compute: the backward pass is modeled below.
  cluster.network->compute_scale = 0;
  Step step;
  const auto ok = dist::sim::run(
      cluster,
      [&] {
    const int rank = dist::get_rank();
    const std::int64_t world = dist::get_world_size();
    for (int layer = 0; layer < 8; ++layer)
      dist::sim::advance(std::chrono::nanoseconds(static_cast<long long>(o.layer_us * 1e3)));
    // Small integers, so that every partial sum is exact in float at any world size.
    std::vector<float> grads(o.params, static_cast<float>(rank % 4 + 1));
    for (std::size_t at = 0; at < o.params; at += bucket_floats) {
      const std::size_t n = std::min(bucket_floats, o.params - at);
      const auto before = dist::sim::now();
      dist::all_reduce(std::span<float>(grads.data() + at, n));
      if (rank == 0)
        step.buckets.push_back({n * sizeof(float), (dist::sim::now() - before).count()});
    }
    const std::int64_t rest = world % 4;
    const auto expected = static_cast<float>(world / 4 * 10 + rest * (rest + 1) / 2);
    for (const float g : grads)
      if (g != expected) return false;
    return true;
      },
      step.prediction);
  for (const bool b : ok) step.correct = step.correct && b;
  return step;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int ranks = o.nodes * 8;
  std::printf(
      "predict: a data-parallel step on dgx_h100(%d) = %d ranks, %zu KiB of gradients "
      "per rank, backward %.0f us\n",
      o.nodes, ranks, o.params * sizeof(float) / 1024, 8 * o.layer_us);
  std::vector<double> comm;
  for (const std::size_t kib : o.bucket_kib) {
    const std::size_t floats = std::max<std::size_t>(1, kib * 1024 / sizeof(float));
    const Step s = run_step(o, floats);
    if (!s.correct) {
      std::printf("predict: wrong gradients with %zu KiB buckets\n", kib);
      return 1;
    }
    const auto& slowest = s.prediction.ranks[static_cast<std::size_t>(s.prediction.slowest_rank())];
    comm.push_back(slowest.comm_us);
    std::printf("\nbuckets of %zu KiB: predicted step %.1f us, of which all_reduce %.1f us\n", kib,
                s.prediction.step_us(), slowest.comm_us);
    // Buckets of the same size take the same time: one line for each run of them.
    for (std::size_t b = 0, end = 0; b < s.buckets.size(); b = end) {
      end = b + 1;
      while (end < s.buckets.size() && s.buckets[end].bytes == s.buckets[b].bytes &&
             s.buckets[end].us == s.buckets[b].us)
        ++end;
      const double algbw = static_cast<double>(s.buckets[b].bytes) / s.buckets[b].us / 1e3;
      const std::string which =
          end - b == 1 ? "bucket " + std::to_string(b)
                       : "buckets " + std::to_string(b) + "-" + std::to_string(end - 1);
      std::printf("  %s: %zu KiB%s in %.1f us, busbw %.1f GB/s\n", which.c_str(),
                  s.buckets[b].bytes / 1024, end - b == 1 ? "" : " each", s.buckets[b].us,
                  algbw * dist::bench::busbw_factor(dist::bench::Pattern::all_reduce, ranks));
    }
  }
  // The model's direction: more, smaller buckets pay the per-call latency more often.
  for (std::size_t i = 1; i < comm.size(); ++i)
    if (o.bucket_kib[i] > o.bucket_kib[i - 1] && comm[i] >= comm[i - 1]) {
      std::printf("predict: larger buckets (%zu KiB) did not predict less time than %zu KiB\n",
                  o.bucket_kib[i], o.bucket_kib[i - 1]);
      return 1;
    }
  return 0;
}
