// The public face of the network model: the report's summary, one call's estimate, advance().
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "core/context.hpp"
#include "dist/errors.hpp"
#include "dist/sim/predict.hpp"
#include "model/cost.hpp"
#include "sim/sim_backend.hpp"

namespace dist::sim {

namespace {
std::string time_text(double us) {
  char buf[32];
  if (us >= 1e6) std::snprintf(buf, sizeof buf, "%.3f s", us / 1e6);
  else if (us >= 1e3) std::snprintf(buf, sizeof buf, "%.3f ms", us / 1e3);
  else std::snprintf(buf, sizeof buf, "%.1f us", us);
  return buf;
}

std::string bytes_text(double b) {
  char buf[32];
  if (b >= 1 << 30) std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1 << 30));
  else if (b >= 1 << 20) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  else if (b >= 1 << 10) std::snprintf(buf, sizeof buf, "%.1f KiB", b / (1 << 10));
  else std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

core::CallKind kind_named(std::string_view kind) {
  for (int k = 0; k <= static_cast<int>(core::CallKind::split_groups); ++k) {
    const auto c = static_cast<core::CallKind>(k);
    if (to_string(c) == kind) return c;
  }
  throw InvalidArgument("dist::sim::estimate: unknown call kind '" + std::string(kind) +
                        "' (expected a collective's name such as all_reduce, or send)");
}
}  // namespace

double Prediction::step_us() const {
  double most = 0;
  for (const auto& r : ranks) most = std::max(most, r.total_us);
  return most;
}

int Prediction::slowest_rank() const {
  if (ranks.empty()) return -1;
  return std::max_element(ranks.begin(), ranks.end(),
                          [](const auto& a, const auto& b) { return a.total_us < b.total_us; })
      ->rank;
}

std::string Prediction::summary() const {
  if (ranks.empty()) return "no prediction (the run had no network)\n";
  const RankPrediction& r = ranks[static_cast<std::size_t>(slowest_rank())];
  std::string out = "predicted step time " + time_text(step_us()) + " on " + network + " (" +
                    std::to_string(ranks.size()) + " ranks); slowest rank " +
                    std::to_string(r.rank) + ": compute " + time_text(r.compute_us) +
                    ", communication " + time_text(r.comm_us) + " (" + time_text(r.late_peers_us) +
                    " of it waiting for late peers)\n";
  std::vector<const CallTime*> calls;
  for (const auto& c : r.calls) calls.push_back(&c);
  std::stable_sort(calls.begin(), calls.end(), [](const CallTime* a, const CallTime* b) {
    return a->blocked_us > b->blocked_us;
  });
  for (const CallTime* c : calls)
    out += "  " + c->kind + " on " + c->group + ": " + std::to_string(c->calls) + " calls, " +
           bytes_text(c->bytes) + ", " + time_text(c->blocked_us) + "\n";
  return out;
}

Estimate estimate(const Cluster& cluster, std::string_view kind, std::size_t bytes,
                  const std::vector<int>& ranks) {
  if (!cluster.network)
    throw InvalidArgument(
        "dist::sim::estimate: the cluster has no network (set Cluster::network "
        "or use a preset such as dist::sim::dgx_h100)");
  detail::check_cluster(cluster);
  std::vector<int> all;
  const std::vector<int>* group = &ranks;
  if (ranks.empty()) {
    all.resize(static_cast<std::size_t>(cluster.world_size()));
    std::iota(all.begin(), all.end(), 0);
    group = &all;
  }
  for (const int r : *group)
    if (r < 0 || r >= cluster.world_size())
      throw InvalidArgument("dist::sim::estimate: rank " + std::to_string(r) +
                            " is not in the world of " + std::to_string(cluster.world_size()));
  const auto at = model::place(*group, cluster.ranks_per_node);
  const auto call = kind_named(kind);
  const auto cost = model::collective(*cluster.network, cluster.ranks_per_node, call,
                                      static_cast<double>(bytes), at);
  double back_to_back = cost.us;
  if (call == core::CallKind::broadcast && at.ranks > 1) {
    const auto chain = model::chain_parts(*cluster.network, cluster.ranks_per_node,
                                          static_cast<double>(bytes), at);
    back_to_back = chain.overhead + chain.transfer;
  }
  return {cost.us, cost.algorithm, back_to_back};
}

namespace {
// The calling rank's network model, or null outside a predicting run.
model::Predictor* calling_predictor(int& rank) {
  core::Context* ctx = core::bound_context();
  if (!ctx || ctx->kind != dist::Backend::sim || !ctx->world) return nullptr;
  auto* backend = dynamic_cast<SimBackend*>(ctx->world->backend.get());
  if (!backend) return nullptr;
  rank = ctx->rank;
  return backend->world().predictor();
}
}  // namespace

void advance(std::chrono::nanoseconds duration) {
  if (duration.count() < 0)
    throw InvalidArgument("dist::sim::advance: the duration must be >= 0, got " +
                          std::to_string(duration.count()) + " ns");
  int rank = -1;
  if (auto* p = calling_predictor(rank))
    p->add_compute(rank, std::chrono::duration<double, std::micro>(duration).count());
}

std::chrono::duration<double, std::micro> now() {
  int rank = -1;
  if (auto* p = calling_predictor(rank)) {
    p->pause(rank);  // the compute so far counts
    p->resume(rank);
    return std::chrono::duration<double, std::micro>(p->clock(rank));
  }
  return std::chrono::steady_clock::now().time_since_epoch();
}

}  // namespace dist::sim
