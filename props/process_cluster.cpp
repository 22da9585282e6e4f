// Cluster: the control world of a gloo_procs, nccl_procs or mpi_procs run (gloo, over the rendezvous store
// distrun's variables point at), per-case worlds under their own key prefixes, and the exchanges
// between them.
#include "props/process_cluster.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <utility>

#include "core/init/launcher.hpp"
#include "core/init/rendezvous.hpp"
#include "dist/api.hpp"
#include "dist/objects.hpp"
#include "real/registry.hpp"
#include "real/testing.hpp"
#include "real/world.hpp"

namespace props::procs {

bool under_mpirun() { return std::getenv("OMPI_COMM_WORLD_RANK") != nullptr; }

bool under_launcher() {
  return (std::getenv("RANK") != nullptr && std::getenv("WORLD_SIZE") != nullptr) || under_mpirun();
}

int launched_processes() {
  for (const char* name : {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"})
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return 0;
}

void abandon(const std::string& why) {
  std::cerr << "\nprops (a rank per process): " << why << std::endl;
  std::_Exit(4);
}

Cluster& Cluster::get() {
  // Never destroyed: its sockets and the store server die with the process, so no process waits
  // at exit for a peer that already left.
  static Cluster* cluster = nullptr;
  static std::exception_ptr failure;
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      cluster = new Cluster();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
  return *cluster;
}

Cluster::Cluster() {
  // Under mpirun, RANK and WORLD_SIZE come from OpenMPI's variables, as init_dist("mpi") sets them.
  if (!std::getenv("RANK") && under_mpirun()) dist::core::prepare_launcher_env("mpi", std::nullopt);
  auto rendezvous = dist::core::open_rendezvous("env://", -1, -1, control_timeout);
  rank_ = rendezvous.rank;
  size_ = rendezvous.world_size;
  host_ = rendezvous.host;
  store_ = rendezvous.store;
  auto control_store = std::make_shared<dist::core::PrefixStore>("props-control", store_);
  control_store->set_timeout(control_timeout);
  control_ = dist::real::make_world_context(
      {dist::Backend::gloo, control_store, rank_, size_, control_timeout, host_});
  first_pid_ = std::stol(exchange(std::to_string(::getpid())).front());
}

std::shared_ptr<dist::core::Context> Cluster::open_case_world(dist::Backend backend,
                                                              std::uint64_t id, int k,
                                                              int ranks_per_node) {
  auto store = std::make_shared<dist::core::PrefixStore>("props-case-" + std::to_string(id),
                                                         store_);
  store->set_timeout(case_timeout);
  dist::real::backend_entry(backend, "props").prepare(rank_);  // nccl: this process's GPU
  auto context = dist::real::make_world_context({backend, store, rank_, k, case_timeout, host_});
  dist::core::ContextBinding binding(context.get());
  dist::real::make_local_groups(ranks_per_node);
  return context;
}

std::vector<std::string> Cluster::exchange(const std::string& mine) {
  dist::core::ContextBinding binding(control_.get());
  return dist::all_gather_object(mine);
}

void Cluster::require_in_step(const std::string& label, const std::string& what) {
  std::vector<std::string> labels;
  try {
    labels = exchange(label);
  } catch (const std::exception& e) {
    abandon("lost the other processes " + what + ": " + e.what());
  }
  bool same = true;
  for (const auto& l : labels) same = same && l == label;
  if (same) return;
  std::string report = "the processes are out of step " + what + ":";
  for (std::size_t p = 0; p < labels.size(); ++p)
    report += "\n  process " + std::to_string(p) + ": " + labels[p];
  abandon(report);
}

}  // namespace props::procs
