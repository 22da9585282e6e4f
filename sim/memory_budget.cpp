// The memory figures of a simulated world: a floor per rank (measured on the sim_scale program:
// a fiber rank holds about 40 KiB, of which these are the part no program avoids), the address
// space its stacks map, and what /proc and RLIMIT_AS say this process may still take.
#include "sim/memory_budget.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/fibers.hpp"

namespace dist::sim {

namespace {
// A rank's state in the fabric, its context and groups, and (fibers) the two stack pages every
// rank touches (the canary's and its first frames'); a thread also holds its kernel side.
constexpr std::size_t state_bytes = 4 * 1024;
constexpr std::size_t fiber_touched = 8 * 1024;
constexpr std::size_t thread_touched = 24 * 1024;

// A rank's stack as mapped: a fiber's (FiberStacks), or a thread's (the system default when
// Cluster::stack_size is 0).
std::size_t rank_stack(const Cluster& c) {
  if (runs_as_fibers(c)) return FiberStacks::size_for(c.stack_size);
  if (c.stack_size) return c.stack_size;
  pthread_attr_t attr;
  std::size_t size = 8 << 20;
  if (pthread_attr_init(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
  }
  return size;
}

// MemAvailable from /proc/meminfo, in bytes (0 when unknown).
std::size_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

// The address space RLIMIT_AS still leaves this process, or nothing when unlimited.
std::optional<std::size_t> address_headroom() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const std::size_t used = address_space_in_use();
  return limit.rlim_cur > used ? limit.rlim_cur - used : 0;
}

std::size_t peak_resident() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::size_t>(usage.ru_maxrss) * 1024;
}

std::string need_text(const Cluster& c, const MemoryNeed& need) {
  const auto n = static_cast<std::size_t>(c.world_size());
  return std::to_string(n) + " ranks as " + (runs_as_fibers(c) ? "fibers" : "threads") +
         " need at least " + bytes_text(need.resident) + " of memory (" +
         bytes_text(need.resident / n) + " a rank) and " + bytes_text(need.address) +
         " of address space (stacks of " + bytes_text(rank_stack(c)) + ")";
}
}  // namespace

std::size_t address_space_in_use() {
  std::ifstream in("/proc/self/statm");
  std::size_t pages = 0;
  in >> pages;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::string bytes_text(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 || value >= 10 ? "%.0f %s" : "%.1f %s", value,
                units[unit]);
  return text;
}

MemoryNeed memory_need(const Cluster& c) {
  const auto n = static_cast<std::size_t>(c.world_size());
  MemoryNeed need;
  // Fibers' guard regions exist only where the map limit allows: not counted.
  need.address = n * rank_stack(c);
  need.resident = n * (state_bytes + (runs_as_fibers(c) ? fiber_touched : thread_touched));
  return need;
}

std::optional<std::string> refuse_memory(const Cluster& c) {
  const MemoryNeed need = memory_need(c);
  const std::size_t available = available_memory();
  if (available > 0 && need.resident > available)
    return need_text(c, need) + ", but this machine has " + bytes_text(available) + " available";
  if (const auto headroom = address_headroom(); headroom && need.address > *headroom)
    return need_text(c, need) + ", but RLIMIT_AS leaves this process " + bytes_text(*headroom) +
           " (a smaller Cluster::stack_size needs less)";
  return std::nullopt;
}

std::string out_of_memory_note(const Cluster& c) {
  return "out of memory: " + need_text(c, memory_need(c)) + " before their own data; the process " +
         "held " + bytes_text(peak_resident()) + " at its peak";
}

}  // namespace dist::sim
