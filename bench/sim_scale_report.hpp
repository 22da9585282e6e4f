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
  double wall_s = 0;  // of dist::sim::run
  double peak_rss_mib = 0;
  std::int64_t rank_calls = 0;  // dist calls per rank × ranks
  double us_per_rank_call = 0;

  SizeResult& fail(std::string why) {
    error = std::move(why);
    return *this;
  }
};

void print_header(std::size_t stack_kib);
void print_row(const SizeResult& r);
// For each schedule: the cost per rank-call at its largest size over that at its smallest.
void print_ratios(const std::vector<SizeResult>& results);
void write_json(const std::string& path, const std::vector<SizeResult>& results,
                std::size_t stack_kib);

}  // namespace dist::bench
