// A fixed workload over every collective and helper, printing one line of results per step, the
// same on every backend: `--launcher sim -n N` runs it on a simulated cluster (lines prefixed
// "[rank] " as distrun does), `--launcher pytorch|mpi` as one process of a gloo world.
#include <signal.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/store/tcp_store.hpp"
#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "dist/sim/run.hpp"

namespace {

using Emit = std::function<void(const std::string&)>;

std::string text(double v) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}
std::string text(float v) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}
template <class T>
std::string text(T v) {
  return std::to_string(v);
}
template <class T>
std::string text(const std::vector<T>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + text(v[i]);
  return out + "]";
}
template <class T>
std::string text(const std::vector<std::vector<T>>& v) {
  std::string out;
  for (const auto& x : v) out += text(x);
  return out.empty() ? "-" : out;
}

// Exact-sum float inputs: multiples of 1/8 of small magnitude, so every order of summation agrees.
std::vector<float> floats(int rank, int count) {
  std::vector<float> v;
  for (int i = 0; i < count; ++i)
    v.push_back(0.125f * static_cast<float>((rank + 1) * (i + 3) % 17) - 1.0f);
  return v;
}

void reductions(int rank, const Emit& emit) {
  for (const char* op : {"sum", "mean", "min", "max", "product"}) {
    auto f = floats(rank, 5);
    std::vector<double> d{0.25 * rank, 1e10 + rank};
    if (std::string(op) == "product") {  // exact products too (any order gives the same bits)
      f = {rank % 2 ? 2.0f : 0.5f, -1.0f, 1.5f};
      d = {rank % 3 ? 4.0 : -0.25, 1.0 + rank};
    }
    dist::all_reduce(f, op);
    dist::all_reduce(d, op);
    std::vector<std::int64_t> i{rank + 1, -3 * rank, 1ll << 40};
    dist::all_reduce(i, op);
    emit(std::string("all_reduce ") + op + ": " + text(f) + " " + text(d) + " " + text(i));
  }
  for (const char* op : {"band", "bor", "bxor"}) {
    std::vector<std::int32_t> b{rank + 5, 0x0f0f ^ (rank << 3)};
    dist::all_reduce(b, op);
    emit(std::string("all_reduce ") + op + ": " + text(b));
  }
  std::vector<float> a = floats(rank, 4);
  auto work = dist::all_reduce_async(std::span<float>(a), dist::ReduceOp::max);
  work.wait();
  emit("all_reduce_async max: " + text(a));
}

void rooted(int rank, int n, const Emit& emit) {
  for (int root = 0; root < n; ++root) {
    auto b = floats(rank, 3);
    dist::broadcast(b, root);
    auto r = floats(rank, 3);
    dist::reduce(r, root, "sum");
    emit("broadcast/reduce root " + std::to_string(root) + ": " + text(b) +
         (rank == root ? " " + text(r) : ""));
  }
  emit("all_gather: " + text(dist::all_gather(floats(rank, 2))));
  emit("gather: " +
       text(dist::gather(std::vector<std::uint8_t>{static_cast<std::uint8_t>(rank * 7), 255},
                         n - 1)));
  std::vector<std::vector<double>> chunks;
  for (int r = 0; r < n; ++r) chunks.push_back({r * 1.5, -r * 0.25});
  std::vector<double> out(2);
  dist::scatter(out, chunks, 0);
  emit("scatter: " + text(out));
  emit("reduce_scatter: " + text(dist::reduce_scatter(floats(rank, 2 * n))));
  std::vector<std::int32_t> a2a;
  for (int j = 0; j < n; ++j) a2a.push_back(100 * rank + j);
  emit("all_to_all: " + text(dist::all_to_all(a2a)));
}

void p2p_and_groups(int rank, int n, const Emit& emit) {
  std::vector<float> token = floats(rank, 2), got(2);
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  if (rank % 2 == 0) dist::send(token, next), dist::recv(got, prev);
  else dist::recv(got, prev), dist::send(token, next);
  emit("send/recv ring: " + text(got));
  std::vector<int> evens;
  for (int r = 0; r < n; r += 2) evens.push_back(r);
  const dist::Group group = dist::new_group(evens);
  std::vector<float> e = floats(rank, 3);
  if (group.is_member()) dist::all_reduce(e, "sum", group);
  emit("evens group: " +
       (group.is_member() ? std::to_string(dist::get_rank(group)) + " " + text(e) : "-"));
}

void helpers(int rank, int n, const Emit& emit) {
  const auto names = dist::all_gather_object(std::string("r") + std::to_string(rank));
  std::string joined;
  for (const auto& s : names) joined += s + ",";
  emit("all_gather_object: " + joined);
  const auto g = dist::gather_object(std::map<std::string, int>{{"rank", rank}}, 0);
  emit("gather_object: " +
       (g ? std::to_string(g->size()) + " from " + std::to_string(g->back().at("rank")) : "-"));
  std::vector<std::string> list{"x", "y"};
  if (rank == n - 1) list = {"from", "last"};
  dist::broadcast_object_list(list, n - 1);
  emit("broadcast_object_list: " + list[0] + " " + list[1]);
  std::map<std::string, std::vector<float>> dict{{"b", floats(rank, 2)},
                                                 {"a", {static_cast<float>(rank) * 0.5f}}};
  dist::all_reduce_dict(dict, "mean");
  emit("all_reduce_dict mean: a " + text(dict["a"]) + " b " + text(dict["b"]));
  const auto seeds = dist::all_gather_object(dist::sync_random_seed());
  bool same = true;
  for (int s : seeds) same = same && s == seeds[0];
  emit(std::string("sync_random_seed: same on every rank ") + (same ? "yes" : "NO"));
  std::vector<int> part;
  for (int i = 0; i < rank + 2; ++i) part.push_back(100 * rank + i);
  for (const char* device : {"cpu", "gpu"}) {
    const auto all = dist::collect_results(part, 3 * n, device);
    emit(std::string("collect_results ") + device + ": " + (all ? text(*all) : "-"));
  }
}

void control(int rank, const Emit& emit) {
  int calls = 0;
  const auto answer = dist::master_only([&] { return ++calls; })();
  std::vector<int> total{calls};
  dist::all_reduce(total);
  emit("master_only: " + std::to_string(total[0]) + " call(s) in all, here " +
       (answer ? "value " + std::to_string(*answer) : "none"));
  std::this_thread::sleep_for(std::chrono::milliseconds(40 * rank));
  const auto now = [] { return std::chrono::steady_clock::now().time_since_epoch().count(); };
  const long long arrived = now();
  dist::barrier();
  const long long left = now();
  const auto arrivals = dist::all_gather_object(arrived),
             departures = dist::all_gather_object(left);
  bool ok = true;
  for (long long a : arrivals)
    for (long long d : departures) ok = ok && a <= d;
  emit(std::string("barrier: no rank left before all arrived ") + (ok ? "yes" : "NO"));
}

struct Args {
  std::string launcher = "sim";
  int n = 2;
  int kill_rank = -1, kill_step = -1;
  bool fan_in = false;  // before kill_step, every other rank receives from the victim
  int timeout_ms = 20000;
  bool secret_check = false;  // instead of the workload: the store's secret (secret_test.cpp)
};

void workload(const Args& args, const Emit& emit) {
  const int rank = dist::get_rank(), n = dist::get_world_size();
  const std::vector<std::function<void()>> steps{[&] {
    emit("world: rank " + std::to_string(rank) + " of " + std::to_string(n) + ", local " +
         std::to_string(dist::get_local_rank()) + " of " + std::to_string(dist::get_local_size()));
                                                 },
                                                 [&] {
    reductions(rank, emit);
  },
      [&] { rooted(rank, n, emit); }, [&] { p2p_and_groups(rank, n, emit); },
      [&] { helpers(rank, n, emit); }, [&] { control(rank, emit); }};
  for (int step = 0; step < static_cast<int>(steps.size()); ++step) {
    if (rank == args.kill_rank && step == args.kill_step) ::raise(SIGKILL);
    if (args.fan_in && step == args.kill_step) {  // each survivor waits on the victim alone
      std::vector<float> from_victim(1);
      dist::recv(from_victim, args.kill_rank);
    }
    steps[static_cast<std::size_t>(step)]();
  }
  emit("done");
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--launcher") a.launcher = value;
    else if (flag == "-n") a.n = std::atoi(value.c_str());
    else if (flag == "--kill-rank") a.kill_rank = std::atoi(value.c_str());
    else if (flag == "--kill-step") a.kill_step = std::atoi(value.c_str());
    else if (flag == "--fan-in") a.fan_in = value == "yes";
    else if (flag == "--timeout-ms") a.timeout_ms = std::atoi(value.c_str());
    else if (flag == "--secret-check") a.secret_check = value == "yes";
  }
  return a;
}

// One collective, the secret this rank was given, and (on rank 1, while rank 0's store is up) what
// the store answers a stranger without the secret and one with a wrong secret.
void secret_check() {
  const int rank = dist::get_rank();
  std::vector<int> sum{rank + 1};
  dist::all_reduce(sum);
  std::printf("all_reduce: %d\n", sum[0]);
  const char* secret = std::getenv("DIST_STORE_SECRET");
  std::printf("secret: %s\n", secret ? secret : "<unset>");
  if (rank == 1) {
    for (const std::string wrong : {"", "not-the-job-secret"}) {
      dist::core::TcpStoreOptions o;
      o.host = std::getenv("MASTER_ADDR");
      o.port = static_cast<std::uint16_t>(std::atoi(std::getenv("MASTER_PORT")));
      o.timeout = std::chrono::seconds(2);
      o.secret = wrong;
      const char* who = wrong.empty() ? "no secret" : "a wrong secret";
      try {
        dist::core::TcpStore stranger(o);
        std::printf("stranger with %s: served\n", who);
      } catch (const std::exception& e) {
        std::printf("stranger with %s: refused: %s\n", who, e.what());
      }
    }
  }
  std::fflush(stdout);
  dist::barrier();  // rank 0 keeps the store up until rank 1 has tried
}

int run_sim(const Args& args) {
  const auto lines = dist::sim::run(dist::sim::Cluster{.nodes = 1, .ranks_per_node = args.n}, [&] {
    std::vector<std::string> mine;
    workload(args, [&](const std::string& line) { mine.push_back(line); });
    return mine;
  });
  for (std::size_t r = 0; r < lines.size(); ++r)
    for (const auto& line : lines[r]) std::printf("[%zu] %s\n", r, line.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  try {
    if (args.launcher == "sim") return run_sim(args);
    dist::init_dist(args.launcher, dist::Backend::gloo,
                    {.timeout = std::chrono::milliseconds(args.timeout_ms)});
    if (args.secret_check) secret_check();
    else
      workload(args, [](const std::string& line) {
        std::printf("%s\n", line.c_str()), std::fflush(stdout);
      });
    dist::destroy_dist();
  } catch (const dist::RankFailure& e) {
    std::fprintf(stderr, "workload: RankFailure (lost rank %d): %s\n", e.failed_rank(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "workload: %s\n", e.what());
    return 1;
  }
  return 0;
}
