// The real backends as one table. Each real/<name>/ folder defines its BackendEntry (entry.cpp, or
// unavailable.cpp where its library was not found) and registry.cpp lists them: init, the test
// harnesses, props and bench iterate the table, so nothing else names a backend but the enum.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/backend_impl.hpp"
#include "dist/types.hpp"
#include "real/world.hpp"

namespace dist::real {

// One backend: the three functions its folder provides, and how its ranks may be placed.
struct BackendEntry {
  dist::Backend kind = dist::Backend::gloo;
  // Whether its library was found when dist was built (is_<name>_available).
  bool built = true;
  // Its ranks may be threads of one process (gloo, nccl), or must be one per process (mpi).
  bool threads = true;
  // The launcher its processes must be started by ("mpi": mpirun), or "" for any.
  std::string_view launcher;
  // Why `ranks` ranks of this backend cannot run in this process ("" when they can): the backend
  // was not built, or this machine lacks what it needs (a GPU per rank for nccl).
  std::string (*unavailable)(int ranks) = nullptr;
  // Readies the calling process or thread for a rank with this local rank (nccl: selects GPU
  // local_rank % count; mpi: initialises MPI, collective over mpirun's processes).
  void (*prepare)(int local_rank) = nullptr;
  // Connects rank spec.rank of the world backend (collective over the spec's ranks).
  std::shared_ptr<core::BackendImpl> (*make_world)(const WorldSpec& spec) = nullptr;
  // Whether dist::reconfigure can agree a membership and connect its group anew (rejoin.hpp).
  bool rejoins = false;
};

// Every real backend compiled into this program, built or not, in a fixed order.
std::span<const BackendEntry* const> registered_backends();

// The entry of `kind`. InvalidArgument for sim (it runs in one process: dist::sim::run).
const BackendEntry& backend_entry(dist::Backend kind, std::string_view caller);

// BackendError("<caller>(<backend>): <why>") when `ranks` ranks of the backend cannot run here.
void require_available(const BackendEntry& entry, int ranks, std::string_view caller);

// The row of a backend whose library was not found at configure time (its unavailable.cpp):
// `why` says so, and connecting raises BackendError with it.
template <dist::Backend K>
std::shared_ptr<core::BackendImpl> refuse_world(const WorldSpec&) {
  require_available(backend_entry(K, "init_process_group"), 1, "init_process_group");
  return nullptr;
}
template <dist::Backend K>
constexpr BackendEntry unbuilt_entry(std::string (*why)(int ranks)) {
  return {.kind = K,
          .built = false,
          .threads = true,
          .launcher = "",
          .unavailable = why,
          .prepare = [](int) {},
          .make_world = refuse_world<K>};
}

}  // namespace dist::real
