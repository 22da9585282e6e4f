// sim_scale (issue 24): runs sim_scale_program on simulated clusters of 8 ranks per node, each size
// in its own child process (so peak RSS is per size), and prints wall time, peak RSS and the cost
// per rank-call of each, then how that cost grows from the smallest size to the largest.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "bench/sim_scale_program.hpp"
#include "bench/sim_scale_report.hpp"
#include "dist/sim/run.hpp"

namespace dist::bench {
namespace {

using Clock = std::chrono::steady_clock;

const char* const usage_text =
    "usage: sim_scale [--ranks N,N,...] [--schedule deterministic|concurrent[,...]]\n"
    "                 [--stack-kib K] [--repeat K] [--min-time S] [--limit-s S]\n"
    "                 [--mem-limit-gib G]\n"
    "                 [--json FILE]\n"
    "  --ranks      world sizes, multiples of 8 (128 and up: of 128); default 1024,4096\n"
    "  --schedule   each size runs in each schedule listed; default deterministic\n"
    "  --stack-kib  Cluster::stack_size of each rank in KiB (0: sim's default); default 64\n"
    "  --repeat     runs of each size at least (each in its own child); the row is their\n"
    "               median; default 3\n"
    "  --min-time   and more (up to 31) until the runs' walls add up to S seconds, so that a\n"
    "               small world's median is not one moment of the machine; default 1 (0: K runs)\n"
    "  --limit-s    wall limit of each size's child process, killed past it; default 600\n"
    "  --mem-limit-gib  RLIMIT_AS of each child (address space, not RSS); 0 (default): none\n"
    "  --json       also write the results as JSON to FILE\n";

struct Options {
  std::vector<int> ranks{1024, 4096};
  std::vector<sim::Schedule> schedules{sim::Schedule::deterministic};
  std::size_t stack_kib = 64;
  int repeat = 3;
  double min_time_s = 1;
  int limit_s = 600;
  long mem_limit_gib = 0;
  std::string json;
};

[[noreturn]] void bad_usage(const std::string& why) {
  std::fprintf(stderr, "sim_scale: %s\n%s", why.c_str(), usage_text);
  std::exit(2);
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1)
    out.push_back(list.substr(start, comma - start));
  out.push_back(list.substr(start));
  return out;
}

long parse_number(const std::string& text, const std::string& flag) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < 0) bad_usage(flag + ": bad number " + text);
  return v;
}

void set_option(Options& o, const std::string& flag, const std::string& value) {
  if (flag == "--ranks") {
    o.ranks.clear();
    for (const auto& item : split(value)) {
      const long n = parse_number(item, flag);
      if (n > std::numeric_limits<int>::max())
        bad_usage("--ranks: " + item + " is over int's range");
      if (const auto why = check_world_size(static_cast<int>(n)); !why.empty())
        bad_usage("--ranks " + item + ": " + why);
      o.ranks.push_back(static_cast<int>(n));
    }
  } else if (flag == "--schedule") {
    o.schedules.clear();
    for (const auto& item : split(value)) {
      if (item == "deterministic") o.schedules.push_back(sim::Schedule::deterministic);
      else if (item == "concurrent") o.schedules.push_back(sim::Schedule::concurrent);
      else bad_usage("--schedule: unknown schedule " + item);
    }
  } else if (flag == "--stack-kib") {
    o.stack_kib = static_cast<std::size_t>(parse_number(value, flag));
  } else if (flag == "--min-time") {
    char* end = nullptr;
    o.min_time_s = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(o.min_time_s >= 0)) bad_usage("--min-time: bad number");
  } else if (flag == "--repeat") {
    o.repeat = static_cast<int>(parse_number(value, flag));
    if (o.repeat < 1) bad_usage("--repeat: at least 1");
  } else if (flag == "--limit-s") {
    o.limit_s = static_cast<int>(parse_number(value, flag));
  } else if (flag == "--mem-limit-gib") {
    o.mem_limit_gib = parse_number(value, flag);
  } else if (flag == "--json") {
    o.json = value;
  } else {
    bad_usage("unknown argument " + flag);
  }
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage_text, stdout);
      std::exit(0);
    }
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      bad_usage(arg + " needs a value");
    }
    set_option(o, arg, value);
  }
  return o;
}

// The child: runs the program once and writes one line to `fd` ("ok <wall s>" or the reason it
// failed), then exits (0: right, 1: wrong values, 2: an error).
[[noreturn]] void child_main(int fd, const Options& o, int ranks, sim::Schedule schedule) {
  std::string line;
  int code = 0;
  if (o.mem_limit_gib > 0) {
    const rlim_t bytes = static_cast<rlim_t>(o.mem_limit_gib) << 30;
    const rlimit limit{bytes, bytes};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) std::perror("sim_scale: setrlimit(RLIMIT_AS)");
  }
  try {
    sim::Cluster cluster{.nodes = ranks / 8, .ranks_per_node = 8, .schedule = schedule};
    cluster.stack_size = o.stack_kib * 1024;
    cluster.max_world_size = std::max(ranks, cluster.max_world_size);  // memory still decides
    const MeshShape shape = mesh_shape(ranks);
    const auto start = Clock::now();
    const auto wrong = sim::run(cluster, [&] { return rank_program(shape); });
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    std::int64_t total = 0, ranks_wrong = 0;
    for (const auto w : wrong) total += w, ranks_wrong += w != 0;
    line = total == 0 ? "ok " + std::to_string(wall)
                      : std::to_string(total) + " wrong values on " + std::to_string(ranks_wrong) +
                            " ranks";
    code = total == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    line = e.what();
    code = 2;
  } catch (...) {
    line = "an exception that is not a std::exception";
    code = 2;
  }
  if (code != 0) std::fprintf(stderr, "sim_scale: %d ranks: %.4000s\n", ranks, line.c_str());
  line = line.substr(0, std::min(line.find('\n'), std::size_t{400}));
  std::fflush(stderr);
  if (::write(fd, line.data(), line.size()) < 0) code = 3;
  ::_exit(code);
}

// Waits for the child, killing it past `limit`; returns false when it had to be killed.
bool wait_child(pid_t pid, std::chrono::seconds limit, int& status, rusage& usage) {
  const auto deadline = Clock::now() + limit;
  while (true) {
    const pid_t r = ::wait4(pid, &status, WNOHANG, &usage);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) {
      status = 0;
      return true;
    }
    if (Clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
      }
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string read_all(int fd) {
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Why a child that did not report "ok" failed.
std::string failure(bool finished, int status, const std::string& line, int limit_s) {
  if (!finished) return "over the " + std::to_string(limit_s) + " s wall limit (killed)";
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")" +
           (sig == SIGKILL   ? ", out of memory?"
            : sig == SIGABRT ? ", its message is above"
                             : "");
  }
  if (!line.empty()) return line;
  return "exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

SizeResult run_size(const Options& o, int ranks, sim::Schedule schedule) {
  SizeResult r;
  r.ranks = ranks;
  r.schedule = schedule == sim::Schedule::deterministic ? "deterministic" : "concurrent";
  int fds[2];
  if (::pipe(fds) != 0) return r.fail(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) return r.fail(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], o, ranks, schedule);
  }
  ::close(fds[1]);
  int status = 0;
  rusage usage{};
  const bool finished = wait_child(pid, std::chrono::seconds(o.limit_s), status, usage);
  const std::string line = read_all(fds[0]);
  ::close(fds[0]);
  r.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  const bool ok =
      finished && WIFEXITED(status) && WEXITSTATUS(status) == 0 && line.rfind("ok ", 0) == 0;
  if (!ok) return r.fail(failure(finished, status, line, o.limit_s));
  r.ok = true;
  r.wall_s = std::strtod(line.c_str() + 3, nullptr);
  r.rank_calls = static_cast<std::int64_t>(calls_per_rank) * ranks;
  r.us_per_rank_call = r.wall_s * 1e6 / static_cast<double>(r.rank_calls);
  return r;
}

}  // namespace
}  // namespace dist::bench

int main(int argc, char** argv) {
  using namespace dist::bench;
  const Options o = parse_args(argc, argv);
  std::vector<SizeResult> results;
  const std::string allocator = allocator_in_use();
  print_header(o.stack_kib, allocator);
  for (const auto schedule : o.schedules)
    for (const int n : o.ranks) {
      // A small world runs for milliseconds, where one slow moment of the machine moves its cost
      // by a third: the row is the median of its runs (each in a child of its own), as many as
      // make up --min-time.
      std::vector<SizeResult> runs;
      constexpr int most_runs = 31;
      double walls = 0;
      while (runs.empty() || (runs.back().ok && static_cast<int>(runs.size()) < most_runs &&
                              (static_cast<int>(runs.size()) < o.repeat || walls < o.min_time_s))) {
        runs.push_back(run_size(o, n, schedule));
        walls += runs.back().wall_s;
      }
      results.push_back(median_of(std::move(runs)));
      print_row(results.back());
      if (!o.json.empty()) write_json(o.json, results, o.stack_kib, allocator);
    }
  print_ratios(results, allocator);
  bool all_ok = true;
  for (const auto& r : results) all_ok = all_ok && r.ok;
  return all_ok ? 0 : 1;
}
