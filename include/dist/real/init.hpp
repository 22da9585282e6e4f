// Bringing up a real (multi-process) distributed world, as torch.distributed's
// init_process_group and MMEngine's init_dist. Declared here, not in <dist/dist.hpp>: these live in
// dist::real (link it); destroy_dist and infer_launcher, which need no backend, are in
// dist/api.hpp.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "dist/api.hpp"
#include "dist/export.hpp"
#include "dist/store.hpp"
#include "dist/types.hpp"

namespace dist {

inline constexpr std::chrono::milliseconds default_pg_timeout{std::chrono::minutes(30)};

// Joins this process to a world of `world_size` processes as rank `rank`, communicating over
// `backend` (gloo; nccl and mpi where built), and makes it the process-wide context every dist::
// call uses. `init_method` says how the ranks find each other, as in torch:
//   "env://"           MASTER_ADDR, MASTER_PORT, and RANK / WORLD_SIZE unless given here;
//   "tcp://host:port"  a TCP store hosted by rank 0 at host:port;
//   "file:///path"     a store in a file every rank can reach (removed when all are done).
// rank/world_size of -1 come from the environment (env://) or the URL's ?rank=&world_size=.
// `timeout` bounds the rendezvous and every later collective (TimeoutError past it).
// SIGPIPE, if it has its default action, is set to ignored (as Python does for torch): a write to
// a dead peer's socket must raise RankFailure, not kill the process.
// Errors: InvalidArgument (bad URL or rank, a missing environment variable, which it names;
// already initialised), TimeoutError (ranks that never arrived), BackendError (a backend that was
// not built, a port in use).
DIST_API void init_process_group(Backend backend, std::string init_method = "env://", int rank = -1,
                                 int world_size = -1,
                                 std::chrono::milliseconds timeout = default_pg_timeout);

// The same through a store every rank opened itself (<dist/store.hpp>: a TCPStore whose master
// is rank 0, a FileStore on a path every rank reaches, a HashStore for a one-process world, or a
// PrefixStore over one), as torch's init_process_group(store=...). The backend rendezvous under
// its own keys in the store ("gloo/world/...", ...), so the program may keep using the store for
// its own; a second init through the same store needs a PrefixStore with a new prefix. The
// backend's network is the TCPStore's host (loopback for other stores unless GLOO_SOCKET_IFNAME
// says otherwise). Errors: InvalidArgument (a null store, a world_size below 1, a rank outside
// [0, world_size), each named; a timeout that is not positive; already initialised); then as above.
DIST_API void init_process_group(Backend backend, std::shared_ptr<Store> store, int rank,
                                 int world_size,
                                 std::chrono::milliseconds timeout = default_pg_timeout);

// Whether dist was built with the backend's library (torch's is_<name>_available): init with it
// can work here. (nccl also needs a GPU per rank when it runs.)
DIST_API bool is_gloo_available();
DIST_API bool is_mpi_available();
DIST_API bool is_nccl_available();

// The options of init_dist (MMEngine's init_dist kwargs).
struct InitOptions {
  std::chrono::milliseconds timeout = default_pg_timeout;
  // slurm only: the rendezvous port, overriding MASTER_PORT (default 29500 when neither is set).
  std::optional<int> port{};
};

// MMEngine's init_dist: reads (and sets) the launcher's environment exactly as MMEngine does,
// then init_process_group(backend, "env://"), then creates the local group of this rank's node
// (from the launcher's LOCAL_RANK etc. and the host names the ranks exchange).
//   "pytorch" (torchrun): RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT;
//     LOCAL_WORLD_SIZE and GROUP_RANK are used when present.
//   "slurm": SLURM_PROCID, SLURM_NTASKS, SLURM_NODELIST (MASTER_ADDR = its first host unless
//     set), SLURM_LOCALID; port: options.port, else MASTER_PORT, else 29500.
//   "mpi": OMPI_COMM_WORLD_{LOCAL_RANK,SIZE,RANK} (or MPICH's MPI_LOCALRANKID, PMI_SIZE,
//     PMI_RANK); MASTER_PORT defaults to 29500; MASTER_ADDR is required.
// Errors: InvalidArgument("Invalid launcher type: ...") or naming a missing variable; then as
// init_process_group.
DIST_API void init_dist(std::string_view launcher, Backend backend,
                        const InitOptions& options = {});

}  // namespace dist
