// A distributed evaluation loop as MMEngine users write it, on a simulated 2 × 3 cluster: a
// DefaultSampler-style padded split, per-rank predictions, collect_results to rank 0 (cpu and gpu),
// metrics shared with broadcast_object_list, losses averaged with all_reduce_dict. Self-checking.
// With --launcher pytorch|mpi the same loop runs as one process of a real (gloo) world instead.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "../common/launch_option.hpp"
#include "dist/dist.hpp"
#include "dist/init.hpp"
#include "dist/sim.hpp"

namespace {

constexpr int num_samples = 23;  // not divisible by the world size (6)
const dist::sim::Cluster cluster{.nodes = 2, .ranks_per_node = 3, .seed = 2024};

// One prediction of the toy model, as a metric's process() would store it.
struct Prediction {
  int index = 0;
  int label = 0;
  int predicted = 0;
  double loss = 0;
  template <class Archive> void serialize(Archive& ar) { ar(index, label, predicted, loss); }
};

// A deterministic toy model over a deterministic dataset: right on most samples.
Prediction predict(int index) {
  const int label = index % 3;
  const bool wrong = (index * 7 + 3) % 5 == 0;
  return {index, label, wrong ? (label + 1) % 3 : label,
          0.125 * ((index * 37) % 11) + (wrong ? 1.0 : 0.0)};
}

// DefaultSampler(shuffle=False, round_up=True): indices padded to a multiple of the world size
// with the first ones again, then rank r takes indices[r::world].
std::vector<int> sampler_indices(int rank, int world) {
  const int total = (num_samples + world - 1) / world * world;
  std::vector<int> mine;
  for (int i = rank; i < total; i += world) mine.push_back(i % num_samples);
  return mine;
}

double accuracy(const std::vector<Prediction>& predictions) {
  int correct = 0;
  for (const auto& p : predictions) correct += p.predicted == p.label ? 1 : 0;
  return static_cast<double>(correct) / static_cast<double>(predictions.size());
}

double mean_loss(const std::vector<Prediction>& predictions) {
  double sum = 0;
  for (const auto& p : predictions) sum += p.loss;
  return sum / static_cast<double>(predictions.size());
}

struct RankReport {
  std::map<std::string, double> metrics_cpu, metrics_gpu;
  std::map<std::string, double> losses;
  bool order_ok = true;  // rank 0: the collected list is samples 0..N-1 in order
};

// The metric's evaluate(): collect to rank 0, compute there, broadcast to every rank.
std::map<std::string, double> evaluate(const std::vector<Prediction>& results, const char* device,
                                       bool& order_ok) {
  const auto collected = dist::collect_results(results, num_samples, device);
  std::vector<std::map<std::string, double>> metrics(1);
  if (collected) {
    for (int i = 0; i < num_samples; ++i)
      order_ok = order_ok && (*collected)[static_cast<std::size_t>(i)].index == i;
    metrics[0] = {{"accuracy", accuracy(*collected)}, {"loss", mean_loss(*collected)}};
  }
  dist::broadcast_object_list(metrics, 0);
  return metrics[0];
}

RankReport run_rank() {
  std::vector<Prediction> results;
  for (int index : sampler_indices(dist::get_rank(), dist::get_world_size()))
    results.push_back(predict(index));
  RankReport report;
  report.metrics_cpu = evaluate(results, "cpu", report.order_ok);
  report.metrics_gpu = evaluate(results, "gpu", report.order_ok);
  // Training-style logging: every rank's mean loss, averaged over ranks.
  std::map<std::string, double> losses{{"loss", mean_loss(results)}};
  dist::all_reduce_dict(losses, "mean");
  report.losses = losses;
  return report;
}

// The single-process answers for a world of `world` ranks.
struct Expected {
  std::map<std::string, double> metrics;
  double rank_mean = 0;  // every rank's mean loss, averaged over ranks
};

Expected expected_for(int world) {
  std::vector<Prediction> all;
  for (int i = 0; i < num_samples; ++i) all.push_back(predict(i));
  Expected e{{{"accuracy", accuracy(all)}, {"loss", mean_loss(all)}}, 0};
  for (int r = 0; r < world; ++r) {
    std::vector<Prediction> part;
    for (int index : sampler_indices(r, world)) part.push_back(predict(index));
    e.rank_mean += mean_loss(part);
  }
  e.rank_mean /= world;
  return e;
}

bool check(const RankReport& rep, const Expected& e, int rank) {
  const double averaged = rep.losses.at("loss");
  const bool ok = rep.metrics_cpu == e.metrics && rep.metrics_gpu == e.metrics && rep.order_ok &&
                  averaged > e.rank_mean - 1e-12 && averaged < e.rank_mean + 1e-12;
  if (!ok)
    std::printf("rank %d: MISMATCH (accuracy cpu %.6f gpu %.6f, averaged loss %.6f)\n", rank,
                rep.metrics_cpu.count("accuracy") ? rep.metrics_cpu.at("accuracy") : -1.0,
                rep.metrics_gpu.count("accuracy") ? rep.metrics_gpu.at("accuracy") : -1.0, averaged);
  return ok;
}

void print_summary(const RankReport& rank0, const Expected& e, const std::string& where, int world,
                   int mismatches) {
  std::printf("evaluate: %d samples on %s (padded to %zu per rank)\n", num_samples, where.c_str(),
              sampler_indices(0, world).size());
  std::printf("  accuracy  distributed cpu %.6f, gpu %.6f, single-process %.6f\n",
              rank0.metrics_cpu.at("accuracy"), rank0.metrics_gpu.at("accuracy"),
              e.metrics.at("accuracy"));
  std::printf("  loss      distributed %.6f, single-process %.6f\n", rank0.metrics_cpu.at("loss"),
              e.metrics.at("loss"));
  std::printf("  per-rank mean loss averaged with all_reduce_dict: %.6f (expected %.6f)\n",
              rank0.losses.at("loss"), e.rank_mean);
  std::printf("%s\n",
              mismatches == 0 ? "OK: every rank agrees with the single-process answer" : "FAILED");
}

// Under a launcher: this process is one rank; rank 0 prints the summary for all.
int run_as_launched_rank(const examples::LaunchOption& option) {
  try {
    dist::init_dist(option.launcher, option.backend);
    const int rank = dist::get_rank(), world = dist::get_world_size();
    const RankReport report = run_rank();
    std::vector<int> mismatches{check(report, expected_for(world), rank) ? 0 : 1};
    dist::all_reduce(mismatches);
    if (rank == 0)
      print_summary(report, expected_for(world),
                    std::to_string(world) + " ranks (" + option.launcher + " launcher, " +
                        std::string(dist::to_string(option.backend)) + ")",
                    world, mismatches[0]);
    dist::destroy_dist();
    return mismatches[0] == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "evaluate: FAILED\n%s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto option = examples::parse_launch_option(argc, argv, "evaluate");
  if (option.real()) return run_as_launched_rank(option);
  const int world = cluster.world_size();
  const Expected expected = expected_for(world);
  const auto reports = dist::sim::run(cluster, run_rank);
  int mismatches = 0;
  for (std::size_t r = 0; r < reports.size(); ++r)
    mismatches += check(reports[r], expected, static_cast<int>(r)) ? 0 : 1;
  print_summary(reports[0], expected,
                std::to_string(cluster.nodes) + " nodes x " + std::to_string(cluster.ranks_per_node) +
                    " ranks",
                world, mismatches);
  return mismatches == 0 ? 0 : 1;
}
