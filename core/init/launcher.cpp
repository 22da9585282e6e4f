// prepare_launcher_env: the pytorch, mpi and slurm rules of MMEngine's init_dist, one function
// each, resolving the rendezvous address; SLURM node-list expansion of the first host.
#include "core/init/launcher.hpp"

#include <cstdlib>

#include "core/init/rendezvous.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {

constexpr long long max_ranks = 1'000'000;

void set_env(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

int env_int_or(const char* name, int fallback, const std::string& context, long long min = 0) {
  if (!get_env(name)) return fallback;
  return static_cast<int>(require_env_int(name, context, min, max_ranks));
}

// The variables a launcher's layout came from, for check_layout's messages.
struct LayoutNames {
  const char* local_rank;
  const char* local_size;  // null when the launcher has none
  const char* world_size;
};

// A layout a launcher can give: a local rank below the world size and the local size (when given),
// a local size no larger than the world, and a rendezvous host that is not empty.
void check_layout(const LaunchInfo& info, const std::string& context, const LayoutNames& names) {
  const auto bad = [&](const char* name, int value, const std::string& why) {
    return InvalidArgument(context + ": the environment variable " + name + "=" +
                           std::to_string(value) + " " + why);
  };
  const int world = info.address.world_size;
  if (info.local_rank >= world)
    throw bad(names.local_rank, info.local_rank,
              "is not below " + std::string(names.world_size) + "=" + std::to_string(world));
  if (info.local_size > world)
    throw bad(names.local_size, info.local_size,
              "is larger than " + std::string(names.world_size) + "=" + std::to_string(world));
  if (info.local_size > 0 && info.local_rank >= info.local_size)
    throw bad(
        names.local_rank, info.local_rank,
        "is not below " + std::string(names.local_size) + "=" + std::to_string(info.local_size));
  if (info.address.host.empty())
    throw InvalidArgument(context + ": the environment variable MASTER_ADDR is set but empty");
}

int require_int(const char* name, const std::string& context, long long min) {
  return static_cast<int>(require_env_int(name, context, min, max_ranks));
}

std::uint16_t require_port(const std::string& context) {
  return static_cast<std::uint16_t>(require_env_int("MASTER_PORT", context, 1, 65535));
}

// The rendezvous port: `given` (slurm's port argument), else MASTER_PORT, else 29500; MASTER_PORT
// is set to it, as MMEngine does.
std::uint16_t port_or_default(const std::string& context, std::optional<int> given) {
  if (given && (*given < 1 || *given > 65535))
    throw InvalidArgument(context + ": port must be in 1..65535, got " + std::to_string(*given));
  if (!given && get_env("MASTER_PORT")) return require_port(context);
  const int port = given.value_or(29500);
  set_env("MASTER_PORT", std::to_string(port));
  return static_cast<std::uint16_t>(port);
}

LaunchInfo pytorch_env() {
  const std::string context = "init_dist('pytorch')";
  LaunchInfo info;
  info.address.rank = require_int("RANK", context, 0);
  info.local_rank = require_int("LOCAL_RANK", context, 0);
  info.local_size = env_int_or("LOCAL_WORLD_SIZE", -1, context, 1);
  if (auto node = get_env("GROUP_RANK")) info.node = "group" + *node;
  info.address.host = require_env("MASTER_ADDR", context);
  info.address.port = store_port(require_port(context), context);
  info.address.world_size = require_int("WORLD_SIZE", context, 1);
  check_layout(info, context, {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "WORLD_SIZE"});
  return info;
}

LaunchInfo mpi_env() {
  const std::string context = "init_dist('mpi')";
  const bool mpich = !get_env("OMPI_COMM_WORLD_LOCAL_RANK") && get_env("PMI_RANK");
  LaunchInfo info;
  info.local_rank = static_cast<int>(require_env_int(
      mpich ? "MPI_LOCALRANKID" : "OMPI_COMM_WORLD_LOCAL_RANK", context, 0, max_ranks));
  info.local_size =
      env_int_or(mpich ? "MPI_LOCALNRANKS" : "OMPI_COMM_WORLD_LOCAL_SIZE", -1, context, 1);
  info.address.port = port_or_default(context, std::nullopt);
  info.address.host = require_env("MASTER_ADDR", context);
  info.address.world_size = require_int(mpich ? "PMI_SIZE" : "OMPI_COMM_WORLD_SIZE", context, 1);
  info.address.rank = require_int(mpich ? "PMI_RANK" : "OMPI_COMM_WORLD_RANK", context, 0);
  check_layout(info, context,
               {mpich ? "MPI_LOCALRANKID" : "OMPI_COMM_WORLD_LOCAL_RANK",
                mpich ? "MPI_LOCALNRANKS" : "OMPI_COMM_WORLD_LOCAL_SIZE",
                mpich ? "PMI_SIZE" : "OMPI_COMM_WORLD_SIZE"});
  set_env("WORLD_SIZE", std::to_string(info.address.world_size));
  set_env("RANK", std::to_string(info.address.rank));
  return info;
}

LaunchInfo slurm_env(std::optional<int> port) {
  const std::string context = "init_dist('slurm')";
  const auto proc_id = require_env_int("SLURM_PROCID", context, 0, max_ranks);
  const auto ntasks = require_env_int("SLURM_NTASKS", context, 1, max_ranks);
  const std::string nodelist = require_env("SLURM_NODELIST", context);
  LaunchInfo info;
  info.local_rank = env_int_or("SLURM_LOCALID", -1, context);
  if (auto node = get_env("SLURM_NODEID")) info.node = "slurm" + *node;
  info.address.port = port_or_default(context, port);
  const auto addr = get_env("MASTER_ADDR");
  info.address.host = addr ? *addr : first_slurm_host(nodelist);
  info.address.rank = static_cast<int>(proc_id);
  info.address.world_size = static_cast<int>(ntasks);
  check_layout(info, context, {"SLURM_LOCALID", nullptr, "SLURM_NTASKS"});
  set_env("MASTER_ADDR", info.address.host);
  set_env("WORLD_SIZE", std::to_string(ntasks));
  if (info.local_rank >= 0) set_env("LOCAL_RANK", std::to_string(info.local_rank));
  set_env("RANK", std::to_string(proc_id));
  return info;
}

}  // namespace

LaunchInfo prepare_launcher_env(std::string_view launcher, std::optional<int> port) {
  if (launcher == "pytorch") return pytorch_env();
  if (launcher == "mpi") return mpi_env();
  if (launcher == "slurm") return slurm_env(port);
  throw InvalidArgument("Invalid launcher type: " + std::string(launcher));
}

std::string infer_launcher() {
  if (get_env("WORLD_SIZE")) return "pytorch";
  if (get_env("SLURM_NTASKS")) return "slurm";
  if (get_env("OMPI_COMM_WORLD_LOCAL_RANK")) return "mpi";
  return "none";
}

std::string first_slurm_host(std::string_view nodelist) {
  // The first top-level entry (commas inside brackets separate ranges, not hosts).
  std::size_t end = 0;
  for (int depth = 0; end < nodelist.size(); ++end) {
    if (nodelist[end] == '[') ++depth;
    if (nodelist[end] == ']') --depth;
    if (nodelist[end] == ',' && depth == 0) break;
  }
  const std::string_view entry = nodelist.substr(0, end);
  // Each bracket group contributes the first value of its first range ("03-05" -> "03").
  std::string host;
  for (std::size_t i = 0; i < entry.size(); ++i) {
    if (entry[i] != '[') {
      host += entry[i];
      continue;
    }
    const std::size_t close = entry.find(']', i);
    if (close == std::string_view::npos)
      throw InvalidArgument("init_dist('slurm'): SLURM_NODELIST '" + std::string(nodelist) +
                            "' has an unclosed '['");
    const std::string_view ranges = entry.substr(i + 1, close - i - 1);
    host += ranges.substr(0, ranges.find_first_of(",-"));
    i = close;
  }
  if (host.empty()) throw InvalidArgument("init_dist('slurm'): SLURM_NODELIST is empty");
  return host;
}

}  // namespace dist::core
