// MMEngine's helpers and the barrier: barrier latency, all_gather_object of 10,000 small records,
// collect_results of 1,000,000 ints (cpu and gpu paths) and all_reduce_dict of 100 keys.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "bench/register.hpp"
#include "dist/dist.hpp"

namespace dist::bench {

namespace {

// A small record as an evaluation loop collects them: an id, a score and a short label.
struct Record {
  int id = 0;
  float score = 0;
  std::string label;
  template <class Archive> void serialize(Archive& ar) { ar(id, score, label); }
};

constexpr int object_records = 10'000;
constexpr int result_ints = 1'000'000;
constexpr int dict_keys = 100;

std::vector<Record> make_records(int rank) {
  std::vector<Record> out;
  out.reserve(object_records);
  for (int i = 0; i < object_records; ++i)
    out.push_back({rank * object_records + i, static_cast<float>(i) * 0.5f,
                   "img_" + std::to_string(i % 1000)});
  return out;
}

// A directory for collect_results' part files, made once per process.
const std::string& part_dir() {
  static const std::string dir = [] {
    std::string pattern = "/tmp/dist_bench_XXXXXX";
    if (!mkdtemp(pattern.data())) return std::string("/tmp");
    return pattern;
  }();
  return dir;
}

std::string name_of(const std::string& what, Backend backend, int n, const std::string& tail = "") {
  return what + "/" + std::string(to_string(backend)) + "/ranks:" + std::to_string(n) + tail;
}

// Registers a helper benchmark whose per-rank state is made once by `setup` (on the rank's
// thread) and used by `call` in every timed repetition.
template <class State, class Setup, class Call>
void add_helper(const std::string& name, Backend backend, int n, Setup setup, Call call) {
  add_benchmark(name, [=](benchmark::State& state) {
    BenchWorld& world = world_for(backend, n);
    std::vector<State> per_rank(static_cast<std::size_t>(n));
    world.run([&](int rank) { per_rank[static_cast<std::size_t>(rank)] = setup(rank, n); });
    measure(state, world, [&](int rank) { call(per_rank[static_cast<std::size_t>(rank)]); }, 0,
            "");
  });
}

void register_for(Backend backend, int n, bool objects, bool results) {
  add_helper<int>(name_of("barrier", backend, n), backend, n, [](int, int) { return 0; },
                  [](int&) { dist::barrier(); });
  if (backend == Backend::gloo) register_raw_barrier(n);
  if (objects)
    add_helper<std::vector<Record>>(
        name_of("all_gather_object", backend, n, "/records:" + std::to_string(object_records)),
        backend, n, [](int rank, int) { return make_records(rank); },
        [](const std::vector<Record>& records) {
          benchmark::DoNotOptimize(dist::all_gather_object(records));
        });
  if (!results) return;
  auto part = [](int rank, int world) {
    std::vector<int> out;
    for (int i = rank; i < result_ints; i += world) out.push_back(i);
    return out;
  };
  for (const std::string device : {"cpu", "gpu"})
    add_helper<std::vector<int>>(
        name_of("collect_results_" + device, backend, n, "/ints:" + std::to_string(result_ints)),
        backend, n, part, [device](const std::vector<int>& mine) {
          const std::optional<std::string> dir =
              device == "cpu" ? std::optional<std::string>(part_dir()) : std::nullopt;
          benchmark::DoNotOptimize(dist::collect_results(mine, result_ints, device, dir));
        });
  add_helper<std::map<std::string, float>>(
      name_of("all_reduce_dict", backend, n, "/keys:" + std::to_string(dict_keys)), backend, n,
      [](int rank, int) {
        std::map<std::string, float> dict;
        for (int k = 0; k < dict_keys; ++k)
          dict["loss_" + std::to_string(k)] = static_cast<float>(rank + k);
        return dict;
      },
      [](std::map<std::string, float>& dict) { dist::all_reduce_dict(dict, "mean"); });
}

}  // namespace

void register_helpers(Backend backend) {
  const bool smoke = profile() == Profile::smoke;
  for (int n : world_sizes_for(backend)) {
    const bool objects = !smoke || n != 4;
    const bool results = !smoke || n == 2;
    register_for(backend, n, objects, results);
  }
}

}  // namespace dist::bench
