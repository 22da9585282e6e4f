// sim_scale's table, ratio lines and JSON file.
#include "bench/sim_scale_report.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "bench/sim_scale_program.hpp"

namespace dist::bench {
namespace {

struct Ratio {
  std::string schedule;
  int smallest = 0, largest = 0;
  std::optional<double> value;  // empty when either size failed
  std::string note;
};

std::vector<Ratio> ratios(const std::vector<SizeResult>& results) {
  std::vector<Ratio> out;
  for (const auto& r : results) {
    bool seen = false;
    for (const auto& q : out) seen = seen || q.schedule == r.schedule;
    if (seen) continue;
    const SizeResult *lo = nullptr, *hi = nullptr;
    for (const auto& s : results) {
      if (s.schedule != r.schedule) continue;
      if (!lo || s.ranks < lo->ranks) lo = &s;
      if (!hi || s.ranks > hi->ranks) hi = &s;
    }
    if (lo->ranks == hi->ranks) continue;
    Ratio q{.schedule = r.schedule,
            .smallest = lo->ranks,
            .largest = hi->ranks,
            .value = {},
            .note = {}};
    if (lo->ok && hi->ok) q.value = hi->us_per_rank_call / lo->us_per_rank_call;
    else q.note = std::to_string(lo->ok ? hi->ranks : lo->ranks) + " failed";
    out.push_back(q);
  }
  return out;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out + "\"";
}

std::string json_result(const SizeResult& r) {
  std::string out = "{\"ranks\": " + std::to_string(r.ranks) +
                    ", \"schedule\": " + json_string(r.schedule) +
                    ", \"ok\": " + (r.ok ? "true" : "false") +
                    ", \"peak_rss_mib\": " + std::to_string(r.peak_rss_mib);
  if (!r.ok) return out + ", \"error\": " + json_string(r.error) + "}";
  return out + ", \"wall_s\": " + std::to_string(r.wall_s) +
         ", \"wall_min_s\": " + std::to_string(r.wall_min_s) +
         ", \"wall_max_s\": " + std::to_string(r.wall_max_s) +
         ", \"runs\": " + std::to_string(r.runs) +
         ", \"rank_calls\": " + std::to_string(r.rank_calls) +
         ", \"us_per_rank_call\": " + std::to_string(r.us_per_rank_call) + "}";
}

std::string json_ratio(const Ratio& q) {
  return "{\"schedule\": " + json_string(q.schedule) +
         ", \"smallest\": " + std::to_string(q.smallest) +
         ", \"largest\": " + std::to_string(q.largest) +
         ", \"ratio\": " + (q.value ? std::to_string(*q.value) : "null") +
         ", \"note\": " + json_string(q.note) + "}";
}

}  // namespace

SizeResult median_of(std::vector<SizeResult> runs) {
  for (const auto& r : runs)
    if (!r.ok) return r;
  std::sort(runs.begin(), runs.end(),
            [](const SizeResult& a, const SizeResult& b) { return a.wall_s < b.wall_s; });
  SizeResult m = runs[runs.size() / 2];
  m.runs = static_cast<int>(runs.size());
  m.wall_min_s = runs.front().wall_s;
  m.wall_max_s = runs.back().wall_s;
  for (const auto& r : runs) m.peak_rss_mib = std::max(m.peak_rss_mib, r.peak_rss_mib);
  return m;
}

std::string allocator_in_use() {
  Dl_info info{};
  void* (*const m)(std::size_t) = &std::malloc;
  if (::dladdr(reinterpret_cast<void*>(m), &info) == 0 || !info.dli_fname) return "unknown";
  std::string file = info.dli_fname;
  file = file.substr(file.rfind('/') + 1);
  return file.rfind("libc.so", 0) == 0 ? "glibc" : file;
}

void print_header(std::size_t stack_kib, const std::string& allocator) {
  std::printf(
      "sim_scale: barrier; all_reduce (world, node group, data/pipeline/tensor groups of a "
      "3-D mesh); init_device_mesh; gather_object: %d dist calls per rank, 8 ranks per "
      "node, rank stacks %s, malloc of %s\n",
      calls_per_rank, stack_kib ? (std::to_string(stack_kib) + " KiB").c_str() : "sim's default",
      allocator.c_str());
  std::printf("%7s  %-13s  %9s  %14s  %11s  %12s  %s\n", "ranks", "schedule", "wall (s)",
              "peak RSS (MiB)", "rank-calls", "us/rank-call", "(range over runs)");
  std::fflush(stdout);
}

void print_row(const SizeResult& r) {
  if (r.ok)
    std::printf("%7d  %-13s  %9.3f  %14.1f  %11lld  %12.3f  (%.3f-%.3f, %d run%s)\n", r.ranks,
                r.schedule.c_str(), r.wall_s, r.peak_rss_mib, static_cast<long long>(r.rank_calls),
                r.us_per_rank_call, r.us_per_rank_call * r.wall_min_s / r.wall_s,
                r.us_per_rank_call * r.wall_max_s / r.wall_s, r.runs, r.runs == 1 ? "" : "s");
  else std::printf("%7d  %-13s  failed: %s\n", r.ranks, r.schedule.c_str(), r.error.c_str());
  std::fflush(stdout);
}

void print_ratios(const std::vector<SizeResult>& results, const std::string& allocator) {
  for (const auto& q : ratios(results)) {
    std::printf("cost per rank-call at %d / at %d (%s, malloc of %s): ", q.largest, q.smallest,
                q.schedule.c_str(), allocator.c_str());
    if (q.value) std::printf("%.2f", *q.value);
    else std::printf("- (%s)", q.note.c_str());
    std::printf("  [target (issues 24, 45): <= 1.5 at 65536 and at 262144 / 1024]\n");
  }
  std::fflush(stdout);
}

void write_json(const std::string& path, const std::vector<SizeResult>& results,
                std::size_t stack_kib, const std::string& allocator) {
  std::ofstream f(path);
  f << "{\"benchmark\": \"sim_scale\", \"issue\": 24, \"calls_per_rank\": " << calls_per_rank
    << ", \"ranks_per_node\": 8, \"stack_kib\": " << stack_kib
    << ", \"allocator\": " << json_string(allocator) << ",\n \"results\": [";
  for (std::size_t i = 0; i < results.size(); ++i)
    f << (i ? ",\n  " : "\n  ") << json_result(results[i]);
  f << "],\n \"ratios\": [";
  const auto qs = ratios(results);
  for (std::size_t i = 0; i < qs.size(); ++i) f << (i ? ",\n  " : "\n  ") << json_ratio(qs[i]);
  f << "]}\n";
  if (!f) std::fprintf(stderr, "sim_scale: could not write %s\n", path.c_str());
}

}  // namespace dist::bench
