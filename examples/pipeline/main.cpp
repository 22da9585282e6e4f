// Pipeline parallelism as training code writes it: a {dp, pp} device mesh (2 data-parallel
// replicas × 4 pipeline stages on a simulated 2 × 4 cluster), microbatches flowing forward and
// gradients flowing back through the stages, each tick one batch_isend_irecv per stage that sends
// the previous result and receives the next input (receiving first: per-op blocking calls in that
// order would deadlock), then the gradients averaged over the dp group. Self-checking against the
// single-process computation. With --launcher pytorch|mpi the same schedule runs as one process
// of a real world instead (pp = 4 when the world divides by 4, else one pipeline of them all).
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "../common/launch_option.hpp"
#include "dist/dist.hpp"
#include "dist/init.hpp"
#include "dist/sim.hpp"

namespace {

constexpr int microbatches = 6;
constexpr std::size_t width = 4;  // elements per microbatch
const dist::sim::Cluster cluster{.nodes = 2, .ranks_per_node = 4, .seed = 7};

using Vec = std::vector<double>;

// Stage s computes y = a_s * x + b_s elementwise, a_s = s + 2, b_s = s; the loss is the sum of the
// last stage's outputs. Small integers: every sum below is exact in double.
double a_of(int stage) { return stage + 2; }
double b_of(int stage) { return stage; }
Vec microbatch(int replica, int m) {
  Vec x(width);
  for (std::size_t k = 0; k < width; ++k) x[k] = replica * 100 + m * 10 + static_cast<double>(k);
  return x;
}

struct Gradients {
  double a = 0, b = 0;
  bool operator==(const Gradients&) const = default;
};

// One stage of one replica: forward over the microbatches, backward, then the dp average.
Gradients run_stage(const dist::DeviceMesh& mesh) {
  const dist::Group pp = mesh.get_group("pp");
  const int stage = mesh.get_local_rank("pp"), stages = mesh.size("pp");
  const int replica = mesh.get_local_rank("dp");
  const bool first = stage == 0, last = stage == stages - 1;
  std::vector<Vec> inputs(microbatches, Vec(width));  // kept for the backward pass
  Vec out(width), incoming(width);
  // Forward: at tick t this stage computes microbatch t - stage; the batch sends what it computed
  // at tick t - 1 and receives this tick's input.
  for (int t = 0; t < microbatches + stages - 1; ++t) {
    const int m = t - stage;
    std::vector<dist::P2POp> ops;
    if (!first && m >= 0 && m < microbatches)
      ops.push_back(dist::P2POp::irecv(std::span<double>(incoming), stage - 1, 0, pp));
    if (!last && m - 1 >= 0 && m - 1 < microbatches)
      ops.push_back(dist::P2POp::isend(std::span<const double>(out), stage + 1, 0, pp));
    for (auto& w : dist::batch_isend_irecv(ops)) w.wait();
    if (m < 0 || m >= microbatches) continue;
    inputs[static_cast<std::size_t>(m)] = first ? microbatch(replica, m) : incoming;
    for (std::size_t k = 0; k < width; ++k)
      out[k] = a_of(stage) * inputs[static_cast<std::size_t>(m)][k] + b_of(stage);
  }
  // Backward: at tick t this stage takes the gradient of microbatch t - (stages - 1 - stage).
  Gradients g;
  Vec grad_out(width), grad_in(width);
  for (int t = 0; t < microbatches + stages - 1; ++t) {
    const int m = t - (stages - 1 - stage);
    std::vector<dist::P2POp> ops;
    if (!last && m >= 0 && m < microbatches)
      ops.push_back(dist::P2POp::irecv(std::span<double>(grad_out), stage + 1, 1, pp));
    if (!first && m - 1 >= 0 && m - 1 < microbatches)
      ops.push_back(dist::P2POp::isend(std::span<const double>(grad_in), stage - 1, 1, pp));
    for (auto& w : dist::batch_isend_irecv(ops)) w.wait();
    if (m < 0 || m >= microbatches) continue;
    if (last) grad_out.assign(width, 1.0);  // d(sum of outputs) / d(output)
    for (std::size_t k = 0; k < width; ++k) {
      g.a += grad_out[k] * inputs[static_cast<std::size_t>(m)][k];
      g.b += grad_out[k];
      grad_in[k] = a_of(stage) * grad_out[k];
    }
  }
  std::vector<double> summed{g.a, g.b};
  dist::all_reduce(summed, dist::ReduceOp::sum, mesh.get_group("dp"));
  return {summed[0], summed[1]};
}

// The same model on one process: every replica's microbatches through every stage.
std::vector<Gradients> single_process(int replicas, int stages) {
  std::vector<Gradients> g(static_cast<std::size_t>(stages));
  for (int d = 0; d < replicas; ++d)
    for (int m = 0; m < microbatches; ++m) {
      std::vector<Vec> x{microbatch(d, m)};
      for (int s = 0; s < stages; ++s) {
        Vec y(width);
        for (std::size_t k = 0; k < width; ++k) y[k] = a_of(s) * x.back()[k] + b_of(s);
        x.push_back(y);
      }
      Vec grad(width, 1.0);
      for (int s = stages - 1; s >= 0; --s)
        for (std::size_t k = 0; k < width; ++k) {
          g[static_cast<std::size_t>(s)].a += grad[k] * x[static_cast<std::size_t>(s)][k];
          g[static_cast<std::size_t>(s)].b += grad[k];
          grad[k] *= a_of(s);
        }
    }
  return g;
}

// This rank's stage and whether its gradients are the single-process ones.
std::pair<int, bool> run_rank(const std::vector<int>& shape) {
  const auto mesh = dist::init_device_mesh(shape, {"dp", "pp"});
  const Gradients got = run_stage(mesh);
  const int stage = mesh.get_local_rank("pp");
  return {stage, got == single_process(shape[0], shape[1])[static_cast<std::size_t>(stage)]};
}

int report(const std::vector<int>& shape, const std::string& where, int mismatches) {
  std::printf(
      "pipeline: %d replica(s) x %d stages on %s, %d microbatches, one batch_isend_irecv "
      "per stage and tick\n",
      shape[0], shape[1], where.c_str(), microbatches);
  std::printf("%s\n", mismatches == 0
                          ? "OK: every stage's gradients match the single-process computation"
                          : "FAILED: gradients differ from the single-process computation");
  return mismatches == 0 ? 0 : 1;
}

int run_as_launched_rank(const examples::LaunchOption& option) {
  try {
    dist::init_dist(option.launcher, option.backend);
    const int world = dist::get_world_size();
    const std::vector<int> shape =
        world % 4 == 0 ? std::vector<int>{world / 4, 4} : std::vector<int>{1, world};
    std::vector<int> mismatches{run_rank(shape).second ? 0 : 1};
    dist::all_reduce(mismatches);
    int status = mismatches[0] == 0 ? 0 : 1;
    if (dist::get_rank() == 0)
      status = report(shape, std::to_string(world) + " processes (" + option.launcher + ")",
                      mismatches[0]);
    dist::destroy_dist();
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipeline: FAILED\n%s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto option = examples::parse_launch_option(argc, argv, "pipeline");
  if (option.real()) return run_as_launched_rank(option);
  const std::vector<int> shape{cluster.nodes, cluster.ranks_per_node};
  const auto results = dist::sim::run(cluster, [&] { return run_rank(shape); });
  int mismatches = 0;
  for (const auto& [stage, ok] : results) mismatches += ok ? 0 : 1;
  return report(shape, "sim", mismatches);
}
