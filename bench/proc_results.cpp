// Google Benchmark JSON of the process benchmarks' results (see proc_results.hpp).
#include "bench/proc_results.hpp"

namespace dist::bench {

void write_results(std::FILE* f, const std::vector<ProcResult>& results, const char* executable,
                   int ranks, const std::string& profile) {
  std::fprintf(f,
               "{\n  \"context\": {\"executable\": \"%s\", \"num_cpus\": 0, \"ranks\": %d, "
               "\"dist_profile\": \"%s\"},\n  \"benchmarks\": [\n",
               executable, ranks, profile.c_str());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ProcResult& r = results[i];
    const double us = r.seconds_per_call * 1e6;
    std::fprintf(f,
                 "    {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                 "\"repetitions\": 1, \"repetition_index\": 0, \"threads\": 1, \"iterations\": "
                 "%lld, \"real_time\": %.6f, \"cpu_time\": %.6f, \"time_unit\": \"us\", "
                 "\"ranks\": %d",
                 r.name.c_str(), r.name.c_str(), r.calls, us, us, ranks);
    if (r.bytes > 0) {
      const double algbw = r.bytes / r.seconds_per_call / 1e9;
      std::fprintf(f, ", \"bytes\": %.0f, \"algbw\": %.6f, \"busbw\": %.6f", r.bytes, algbw,
                   algbw * r.bus_factor);
    }
    std::fprintf(f, "}%s\n", i + 1 < results.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
}

}  // namespace dist::bench
