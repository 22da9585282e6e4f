// sim_scale's results: one per world size and schedule, printed as a table row and written as
// JSON (bench/report.py reads it), and the growth of the cost per rank-call across sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dist::bench {

struct SizeResult {
  int ranks = 0;
  std::string schedule;
  bool ok = false;
  std::string error;  // why it failed, when !ok
  double wall_s = 0;  // of dist::sim::run (the median of `runs`)
  double wall_min_s = 0, wall_max_s = 0;
  int runs = 1;
  double peak_rss_mib = 0;      // the largest of the runs
  std::int64_t rank_calls = 0;  // dist calls per rank × ranks
  double us_per_rank_call = 0;

  SizeResult& fail(std::string why) {
    error = std::move(why);
    return *this;
  }
};

// One result of several runs of a size: the first failure, else the median wall time (and the cost
// per rank-call from it), the range of the walls and the largest peak RSS.
SizeResult median_of(std::vector<SizeResult> runs);

// Which malloc this process (and its children) uses: "glibc" or the library that defines malloc
// ahead of glibc's, LD_PRELOAD's (for example libtcmalloc_minimal.so.4). A large world's cost per
// rank-call depends on it: docs/testing.md#large-worlds.
std::string allocator_in_use();

void print_header(std::size_t stack_kib, const std::string& allocator);
void print_row(const SizeResult& r);
// For each schedule: the cost per rank-call at its largest size over that at its smallest.
void print_ratios(const std::vector<SizeResult>& results, const std::string& allocator);
void write_json(const std::string& path, const std::vector<SizeResult>& results,
                std::size_t stack_kib, const std::string& allocator);

}  // namespace dist::bench
