// Mixture-of-experts dispatch and combine as MoE layers write it: a {dp, ep} device mesh (2
// data-parallel replicas × 4 experts on a simulated 2 × 4 cluster); each rank routes its tokens to
// the experts of its ep group (uneven counts, some zero), learns what it will receive with an
// all_to_all of the counts, dispatches with the uneven all_to_all (span form with split sizes),
// lets its expert transform what it got, combines the results back with the reverse uneven
// all_to_all, then all_reduces a checksum over dp. Self-checking against the single-process
// answer. With --launcher pytorch|mpi the same runs as one process of a real world instead (ep = 4
// when the world divides by 4, else one ep group of them all).
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "../common/launch_option.hpp"
#include "dist/dist.hpp"
#include "dist/init.hpp"
#include "dist/sim.hpp"

namespace {

constexpr std::size_t hidden = 3;  // elements per token
const dist::sim::Cluster cluster{.nodes = 2, .ranks_per_node = 4, .seed = 11};

using Vec = std::vector<double>;

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Rank r's tokens: 2 + r % 5 of them, each `hidden` small integers (every sum below is exact).
std::vector<Vec> tokens_of(int rank) {
  std::vector<Vec> tokens(static_cast<std::size_t>(2 + rank % 5), Vec(hidden));
  for (std::size_t t = 0; t < tokens.size(); ++t)
    for (std::size_t k = 0; k < hidden; ++k)
      tokens[t][k] =
          static_cast<double>(mix(static_cast<std::uint64_t>(rank) * 1000 + t * 10 + k) % 97);
  return tokens;
}

// The router: token t of rank r goes to expert (h % 7) % experts (an index in the ep group), so
// the first experts get about twice the share of the last and some (rank, expert) pairs get none.
int route(int rank, std::size_t t, int experts) {
  return static_cast<int>(mix(static_cast<std::uint64_t>(rank) * 7919 + t) % 7) % experts;
}

// Expert e multiplies every element by e + 2.
double expert_scale(int expert) { return expert + 2; }

std::vector<std::int64_t> elements(const std::vector<std::int64_t>& token_counts) {
  std::vector<std::int64_t> out;
  for (const std::int64_t c : token_counts) out.push_back(c * static_cast<std::int64_t>(hidden));
  return out;
}

// What one rank learns: its tokens after the expert round trip, the tokens it sent to each expert,
// and the dp sum of its ep coordinate's checksums.
struct Outcome {
  std::vector<Vec> outputs;
  std::vector<std::int64_t> sent;  // per expert
  double dp_checksum = 0;
};

// Dispatch, expert, combine on the caller's ep group; then the checksum over dp.
Outcome run_layer(const dist::DeviceMesh& mesh) {
  const dist::Group ep = mesh.get_group("ep");
  const int experts = mesh.size("ep"), me = mesh.get_local_rank("ep");
  const int rank = dist::get_rank();
  const auto tokens = tokens_of(rank);
  // Sort the tokens by expert: expert j's block of the send buffer is input block j.
  std::vector<std::vector<std::size_t>> by_expert(static_cast<std::size_t>(experts));
  for (std::size_t t = 0; t < tokens.size(); ++t)
    by_expert[static_cast<std::size_t>(route(rank, t, experts))].push_back(t);
  std::vector<std::int64_t> send_counts, recv_counts(static_cast<std::size_t>(experts));
  Vec send;
  for (const auto& ts : by_expert) {
    send_counts.push_back(static_cast<std::int64_t>(ts.size()));
    for (std::size_t t : ts) send.insert(send.end(), tokens[t].begin(), tokens[t].end());
  }
  // How many tokens each rank of the group sends this expert: an even all_to_all of the counts.
  dist::all_to_all(std::span<std::int64_t>(recv_counts), std::span<const std::int64_t>(send_counts),
                   ep);
  const auto input_splits = elements(send_counts), output_splits = elements(recv_counts);
  Vec received(static_cast<std::size_t>(
      std::accumulate(output_splits.begin(), output_splits.end(), std::int64_t{0})));
  dist::all_to_all(std::span<double>(received), std::span<const double>(send),
                   std::span<const std::int64_t>(output_splits),
                   std::span<const std::int64_t>(input_splits), ep);
  for (double& x : received) x *= expert_scale(me);
  // Combine: the reverse exchange, splits swapped, so each token comes back where it was sent from.
  Vec combined(send.size());
  dist::all_to_all(std::span<double>(combined), std::span<const double>(received),
                   std::span<const std::int64_t>(input_splits),
                   std::span<const std::int64_t>(output_splits), ep);
  Outcome out{.outputs = std::vector<Vec>(tokens.size()), .sent = send_counts};
  std::size_t at = 0;
  for (const auto& ts : by_expert)
    for (std::size_t t : ts) {
      out.outputs[t].assign(combined.begin() + static_cast<std::ptrdiff_t>(at),
                            combined.begin() + static_cast<std::ptrdiff_t>(at + hidden));
      at += hidden;
    }
  std::vector<double> checksum{0};
  for (const Vec& v : out.outputs) checksum[0] += std::accumulate(v.begin(), v.end(), 0.0);
  dist::all_reduce(checksum, dist::ReduceOp::sum, mesh.get_group("dp"));
  out.dp_checksum = checksum[0];
  return out;
}

// The same layer on one process: rank r's tokens, each through its expert.
std::vector<Vec> single_process(int rank, int experts) {
  auto tokens = tokens_of(rank);
  for (std::size_t t = 0; t < tokens.size(); ++t)
    for (double& x : tokens[t]) x *= expert_scale(route(rank, t, experts));
  return tokens;
}

double single_process_checksum(int rank, const std::vector<int>& shape) {
  double sum = 0;
  for (int d = 0; d < shape[0]; ++d)  // every replica's rank at this rank's ep coordinate
    for (const Vec& v : single_process(d * shape[1] + rank % shape[1], shape[1]))
      sum += std::accumulate(v.begin(), v.end(), 0.0);
  return sum;
}

// This rank's count of wrong tokens (a wrong checksum counts as one more), and its row of the
// world's (rank, expert) token table, every rank's row summed in with one all_reduce.
struct RankResult {
  int mismatches = 0;
  std::vector<std::int64_t> table;  // table[r * experts + e]: tokens rank r sent expert e
};

RankResult run_rank(const std::vector<int>& shape) {
  const auto mesh = dist::init_device_mesh(shape, {"dp", "ep"});
  const int rank = dist::get_rank(), experts = shape[1];
  const Outcome got = run_layer(mesh);
  const auto want = single_process(rank, experts);
  RankResult result{
      .mismatches = 0,
      .table = std::vector<std::int64_t>(static_cast<std::size_t>(shape[0] * experts * experts))};
  for (std::size_t t = 0; t < want.size(); ++t)
    result.mismatches += got.outputs[t] == want[t] ? 0 : 1;
  result.mismatches += got.dp_checksum == single_process_checksum(rank, shape) ? 0 : 1;
  for (int e = 0; e < experts; ++e)
    result.table[static_cast<std::size_t>(rank * experts + e)] =
        got.sent[static_cast<std::size_t>(e)];
  dist::all_reduce(result.table);
  return result;
}

int report(const std::vector<int>& shape, const std::string& where,
           const std::vector<std::int64_t>& table, int mismatches) {
  const int experts = shape[1];
  int tokens = 0, empty = 0;
  for (const std::int64_t c : table) {
    tokens += static_cast<int>(c);
    empty += c == 0 ? 1 : 0;
  }
  std::printf("moe: %d ranks (%d dp x %d ep) on %s, %d tokens of %zu elements, uneven all_to_all\n",
              shape[0] * experts, shape[0], experts, where.c_str(), tokens, hidden);
  for (int d = 0; d < shape[0]; ++d) {
    std::printf("  dp %d: tokens dispatched per expert:", d);
    for (int e = 0; e < experts; ++e) {
      std::int64_t got = 0;
      for (int r = d * experts; r < (d + 1) * experts; ++r)
        got += table[static_cast<std::size_t>(r * experts + e)];
      std::printf(" %lld", static_cast<long long>(got));
    }
    std::printf("\n");
  }
  std::printf("  %d of %zu (rank, expert) blocks empty\n", empty, table.size());
  if (mismatches == 0)
    std::printf("ok: every token and checksum matches the single-process answer\n");
  else
    std::printf("FAILED: %d tokens or checksums differ from the single-process answer\n",
                mismatches);
  return mismatches == 0 ? 0 : 1;
}

int run_as_launched_rank(const examples::LaunchOption& option) {
  try {
    dist::init_dist(option.launcher, option.backend);
    const int world = dist::get_world_size();
    const std::vector<int> shape =
        world % 4 == 0 ? std::vector<int>{world / 4, 4} : std::vector<int>{1, world};
    const RankResult result = run_rank(shape);
    std::vector<int> mismatches{result.mismatches};
    dist::all_reduce(mismatches);
    int status = mismatches[0] == 0 ? 0 : 1;
    if (dist::get_rank() == 0)
      status = report(shape, std::to_string(world) + " processes (" + option.launcher + ")",
                      result.table, mismatches[0]);
    dist::destroy_dist();
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moe: FAILED\n%s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto option = examples::parse_launch_option(argc, argv, "moe");
  if (option.real()) return run_as_launched_rank(option);
  const std::vector<int> shape{cluster.nodes, cluster.ranks_per_node};
  const auto results = dist::sim::run(cluster, [&] { return run_rank(shape); });
  int mismatches = 0;
  for (const RankResult& r : results) mismatches += r.mismatches;
  return report(shape, "sim", results[0].table, mismatches);
}
