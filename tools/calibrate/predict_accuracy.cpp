// predict_accuracy (issue 26): how well the network model predicts this machine. Reads the points
// dist_calibrate measured (--measured) and the profile it fitted (--profile), predicts each point
// as it was measured, a call in a loop of back-to-back calls (the predicted time of 1 + 4 calls
// less that of 1, over 4, in predicting sim runs: dist::sim::this_machine with compute_scale 0,
// so only the model's time counts), and prints predicted/measured per point and the share within
// 0.75-1.33; then the dgx_h100 preset's busbw against the published figures.
//   predict_accuracy --profile this_machine.json --measured measured.json [--json FILE]
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dist/bench/bus_bandwidth.hpp"
#include "dist/sim/predict.hpp"
#include "tools/calibrate/points.hpp"

namespace {

using dist::calibrate::Point;

// The point's collective, `calls` times back to back, with dist_calibrate's buffers.
void call_in_a_loop(const Point& p, int calls) {
  const auto shape = dist::calibrate::shape_of(p.kind, p.bytes, p.ranks);
  std::vector<float> in(shape.in, 1.0f), out(shape.out);
  for (int i = 0; i < calls; ++i) dist::calibrate::call_collective(p.kind, shape, in, out);
}

double predicted_step_us(const Point& p, const std::string& profile, int calls) {
  auto cluster = dist::sim::this_machine(p.ranks, profile);
  cluster.network->compute_scale = 0;  // the model's time only, not sim's own copying
  dist::sim::Prediction prediction;
  dist::sim::run(
      cluster, [&] { call_in_a_loop(p, calls); }, prediction);
  return prediction.step_us();
}

// A call's time in a loop: calls that overlap (a broadcast's root goes on before the chain ends)
// cost less than one alone; the first call's fill is left out, as the measurement's batches
// amortize it.
double predicted_us(const Point& p, const std::string& profile) {
  constexpr int more = 4;
  return (predicted_step_us(p, profile, 1 + more) - predicted_step_us(p, profile, 1)) / more;
}

// The dgx_h100 preset's all_reduce busbw (GB/s) on one node of 8 GPUs at 8 GiB, as nccl-tests
// reports it; ring only (NCCL_ALGO=Ring) when `ring`.
double dgx_busbw(bool ring) {
  auto cluster = dist::sim::dgx_h100(1);
  if (ring) cluster.network->nvls_gbps = 0;
  const double bytes = 8.0 * (1 << 30);
  const auto e = dist::sim::estimate(cluster, "all_reduce", static_cast<std::size_t>(bytes));
  return bytes / e.us / 1e3 * dist::bench::busbw_factor(dist::bench::Pattern::all_reduce, 8);
}

int usage(const char* what) {
  std::fprintf(stderr,
               "predict_accuracy: %s\nusage: predict_accuracy --profile FILE --measured FILE "
               "[--json FILE]\n",
               what);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string profile, measured, json_out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage(("unknown argument or missing value: " + arg).c_str());
    if (arg == "--profile") profile = argv[++i];
    else if (arg == "--measured") measured = argv[++i];
    else if (arg == "--json") json_out = argv[++i];
    else return usage(("unknown argument " + arg).c_str());
  }
  if (profile.empty() || measured.empty()) return usage("--profile and --measured are required");
  try {
    const auto m = dist::calibrate::read_measurements(measured);  // or InvalidArgument
    const auto net = dist::sim::Network::load(profile);  // the profile loads, or this throws
    std::printf("predicted (%s, fitted by dist_calibrate) / measured (%s processes), %zu points\n",
                profile.c_str(), m.backend.c_str(), m.points.size());
    std::printf("%-15s %6s %10s %13s %13s %7s\n", "collective", "ranks", "size", "measured us",
                "predicted us", "ratio");
    nlohmann::json rows = nlohmann::json::array();
    dist::calibrate::WithinBand within;
    for (const Point& p : m.points) {
      const double predicted = predicted_us(p, profile);
      const double ratio = predicted / p.us;
      const bool ok = within.add(p.ranks, ratio);
      std::printf("%-15s %6d %10s %13.1f %13.1f %7.2f%s\n", p.kind.c_str(), p.ranks,
                  dist::calibrate::size_text(p.bytes).c_str(), p.us, predicted, ratio,
                  ok ? "" : "  *");
      rows.push_back({{"kind", p.kind},
                      {"ranks", p.ranks},
                      {"bytes", p.bytes},
                      {"measured_us", p.us},
                      {"predicted_us", predicted},
                      {"ratio", ratio}});
    }
    nlohmann::json shares = nlohmann::json::array();
    int all_ok = 0, all = 0;
    for (const auto& w : within.shares) {
      std::printf("within 0.75-1.33 at %d ranks: %d of %d points (%.0f%%)\n", w.ranks, w.within,
                  w.points, 100.0 * w.within / w.points);
      shares.push_back({{"ranks", w.ranks}, {"within", w.within}, {"points", w.points}});
      all_ok += w.within, all += w.points;
    }
    std::printf("within 0.75-1.33 overall: %d of %d points (%.0f%%; goal >= 80%%)\n", all_ok, all,
                100.0 * all_ok / std::max(all, 1));
    const double ring = dgx_busbw(true), nvls = dgx_busbw(false);
    std::printf(
        "dgx_h100(1) all_reduce 8 GiB busbw: ring %.0f GB/s / 370 published = %.2f; "
        "NVLS %.0f GB/s / 480 published = %.2f (goal within 15%%)\n",
        ring, ring / 370, nvls, nvls / 480);
    if (!json_out.empty()) {
      std::ofstream out(json_out);
      out << nlohmann::json{{"profile", profile},
                            {"network_source", net.source},
                            {"backend", m.backend},
                            {"points", rows},
                            {"within", shares},
                            {"dgx_h100", {{"ring_busbw", ring}, {"nvls_busbw", nvls}}}}
                 .dump(1)
          << "\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "predict_accuracy: %s\n", e.what());
    return 1;
  }
  return 0;
}
