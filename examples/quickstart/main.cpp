// The quick-start demo: runs a self-checking program on a simulated 2-node x 4-rank cluster, then
// shows sim catching a desync bug (rank 1 calls broadcast while rank 0 calls all_reduce). With
// --launcher pytorch|mpi the same program runs as one process of a real (gloo) world instead.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <dist/dist.hpp>
#include <dist/init.hpp>
#include <dist/sim.hpp>

#include "../common/launch_option.hpp"

namespace {

using Vec = std::vector<int>;

// Stops this rank with a message naming the check; sim::run turns it into a RunError.
void expect(bool ok, int rank, const std::string& what) {
  if (!ok) throw std::runtime_error("rank " + std::to_string(rank) + ": check failed: " + what);
}

// What every rank runs (8 ranks on sim; any world of 2 or more under a launcher). Each rank
// contributes values derived from its rank and computes the expected results on its own.
std::string rank_program(dist::Backend backend) {
  const int rank = dist::get_rank(), n = dist::get_world_size();
  const auto [info_rank, info_size] = dist::get_dist_info();
  expect(info_rank == rank && info_size == n && n >= 2, rank, "get_dist_info (2 or more ranks)");
  expect(dist::get_backend() == backend, rank, "get_backend");
  const int local_size = dist::get_local_size();
  expect(local_size >= 1 && dist::get_local_rank() == rank % local_size, rank, "local rank");
  expect(dist::is_main_process() == (rank == 0), rank, "is_main_process");

  // master_only: the answer is engaged on rank 0 only.
  auto answer = dist::master_only([] { return 42; })();
  expect(answer.has_value() == (rank == 0), rank, "master_only");
  dist::barrier();

  // all_reduce: 8 ranks: sum of 0..7 = 28; integer mean is exact: 28 / 8 = 3 (truncated).
  const int total = n * (n - 1) / 2;
  Vec sum{rank, 1}, mean{rank};
  dist::all_reduce(sum, "sum");
  dist::all_reduce(mean, "mean");
  expect(sum == Vec{total, n}, rank, "all_reduce sum");
  expect(mean == Vec{total / n}, rank, "all_reduce mean");

  // broadcast from rank 3 (or the last rank of a smaller world): everyone ends with its data.
  const int src = std::min(3, n - 1);
  Vec b{rank * 10, rank * 10 + 1};
  dist::broadcast(b, src);
  expect(b == Vec{src * 10, src * 10 + 1}, rank, "broadcast");

  // all_gather and gather (to the last rank): element r is rank r's data.
  const auto everyone = dist::all_gather(Vec{rank, rank * rank});
  for (int r = 0; r < n; ++r) expect(everyone[r] == Vec{r, r * r}, rank, "all_gather");
  const auto gathered = dist::gather(Vec{rank}, /*dst=*/n - 1);
  expect(gathered.size() == (rank == n - 1 ? static_cast<std::size_t>(n) : 0u), rank, "gather size");
  for (int r = 0; r < static_cast<int>(gathered.size()); ++r)
    expect(gathered[r] == Vec{r}, rank, "gather");

  // reduce_scatter: every rank contributes [0, 1, ..., n-1] + rank; rank r gets sum_j (r + j).
  Vec rs_in(n);
  std::iota(rs_in.begin(), rs_in.end(), rank);
  expect(dist::reduce_scatter(rs_in) == Vec{n * rank + total}, rank, "reduce_scatter");

  // all_to_all: chunk j of rank r goes to rank j; rank r receives 100*j + r from each j.
  Vec a2a_in(n), a2a_expected(n);
  for (int j = 0; j < n; ++j) a2a_in[j] = 100 * rank + j, a2a_expected[j] = 100 * j + rank;
  expect(dist::all_to_all(a2a_in) == a2a_expected, rank, "all_to_all");

  // A ring with send/recv: even ranks send first, odd ranks receive first (no deadlock).
  Vec token{rank}, got{-1};
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  if (rank % 2 == 0) dist::send(token, next), dist::recv(got, prev);
  else dist::recv(got, prev), dist::send(token, next);
  expect(got == Vec{prev}, rank, "send/recv ring");

  // new_group of the even ranks: every rank creates it; only members communicate on it.
  std::vector<int> even_ranks;
  int even_sum = 0;
  for (int r = 0; r < n; r += 2) even_ranks.push_back(r), even_sum += r;
  const dist::Group evens = dist::new_group(even_ranks);
  std::string group_note = "not in evens";
  if (evens.is_member()) {
    Vec e{rank};
    dist::all_reduce(e, "sum", evens);  // 0 + 2 + 4 + 6 on 8 ranks
    expect(e == Vec{even_sum} && dist::get_rank(evens) == rank / 2, rank, "even group");
    group_note = "evens rank " + std::to_string(dist::get_rank(evens)) + " sum " + std::to_string(even_sum);
  }

  std::ostringstream line;
  line << "rank " << rank << "/" << n << " (node " << rank / local_size << ", local "
       << dist::get_local_rank() << "): sum " << sum[0] << ", mean " << mean[0]
       << ", ring got " << got[0] << ", " << group_note;
  return line.str();
}

// Under a launcher: this process is one rank; it prints its own line, rank 0 the verdict.
int run_as_launched_rank(const examples::LaunchOption& option) {
  try {
    dist::init_dist(option.launcher, option.backend);
    std::printf("%s\n", rank_program(option.backend).c_str());
    std::fflush(stdout);
    dist::barrier();
    if (dist::is_main_process())
      std::printf("quickstart: %d ranks OK (%s launcher, %s backend)\n", dist::get_world_size(),
                  option.launcher.c_str(), std::string(dist::to_string(option.backend)).c_str());
    dist::destroy_dist();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickstart: FAILED\n%s\n", e.what());
    return 1;
  }
}

// The desync bug sim catches: rank 1 calls broadcast while rank 0 calls all_reduce.
int show_desync() {
  std::printf("\nNow a buggy 2-rank program (rank 0: all_reduce, rank 1: broadcast):\n");
  try {
    dist::sim::run(dist::sim::Cluster{.nodes = 1, .ranks_per_node = 2}, [] {
      Vec x{dist::get_rank()};
      if (dist::get_rank() == 0) dist::all_reduce(x);
      else dist::broadcast(x, 0);
    });
  } catch (const dist::sim::RunError& e) {
    std::istringstream message(e.what());
    std::string l;
    while (std::getline(message, l)) std::printf("  %s\n", l.c_str());  // the whole message
    if (!e.failed_with<dist::DesyncError>(0) || !e.failed_with<dist::DesyncError>(1)) {
      std::fprintf(stderr, "quickstart: expected a DesyncError on both ranks\n");
      return 1;
    }
    std::printf("quickstart: desync caught as expected\n");
    return 0;
  }
  std::fprintf(stderr, "quickstart: the buggy program was not caught\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const auto option = examples::parse_launch_option(argc, argv, "quickstart");
  if (option.real()) return run_as_launched_rank(option);
  try {
    const auto lines = dist::sim::run(dist::sim::Cluster{.nodes = 2, .ranks_per_node = 4},
                                      [] { return rank_program(dist::Backend::sim); });
    for (const auto& l : lines) std::printf("%s\n", l.c_str());
    std::printf("quickstart: %zu ranks OK\n", lines.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickstart: FAILED\n%s\n", e.what());
    return 1;
  }
  return show_desync();
}
