// make_mpi_world: MPI initialised (or found initialised), this process's MPI rank checked against
// the rendezvous', and the world group on its own communicator over MPI ranks [0, world size)
// (so the program's own use of MPI_COMM_WORLD never matches dist's messages), under the store
// prefix "mpi/world".
#include "real/mpi/world.hpp"

#include "core/store/join.hpp"
#include "core/store/store.hpp"
#include "dist/errors.hpp"
#include "real/mpi/backend.hpp"
#include "real/mpi/runtime.hpp"

namespace dist::real {

namespace {
constexpr int create_tag = 0x5D15;  // MPI_Comm_create_group's tag: ours alone on MPI_COMM_WORLD

// MPI's rank and size of this process, checked against the rendezvous'.
void check_placement(const WorldSpec& spec) {
  int rank = 0;
  int size = 0;
  auto lock = mpi_lock();
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  if (rank != spec.rank || spec.world_size > size)
    throw BackendError("init_process_group(mpi): MPI says this process is rank " +
                       std::to_string(rank) + " of " + std::to_string(size) +
                       ", the rendezvous says rank " + std::to_string(spec.rank) + " of " +
                       std::to_string(spec.world_size) +
                       "; start the mpi backend's processes with mpirun (init_dist(\"mpi\", "
                       "Backend::mpi) reads the ranks from mpirun's environment)");
}
}  // namespace

std::shared_ptr<core::BackendImpl> make_mpi_world(const WorldSpec& spec) {
  ensure_mpi();
  check_placement(spec);
  MpiGroupSpec group;
  group.store = spec.store;
  group.prefix = "mpi/world";
  group.global_ranks = world_ranks_of(spec);
  group.rank = spec.rank;
  group.timeout = spec.timeout;
  // MPI_Comm_create_group blocks without a deadline: it starts once every member has arrived.
  if (spec.store) {
    core::PrefixStore joins(group.prefix, spec.store);
    core::wait_for_members(joins, group.global_ranks, spec.rank, spec.timeout,
                           "init_process_group(mpi)", "world", "was every rank started by mpirun?");
  }
  {
    auto lock = mpi_lock();
    MPI_Group all = MPI_GROUP_NULL;
    MPI_Group members = MPI_GROUP_NULL;
    int range[1][3] = {{0, spec.world_size - 1, 1}};
    check_mpi(MPI_Comm_group(MPI_COMM_WORLD, &all), "MPI_Comm_group");
    const int made = MPI_Group_range_incl(all, 1, range, &members);
    const int created = made == MPI_SUCCESS
                            ? MPI_Comm_create_group(MPI_COMM_WORLD, members, create_tag, &group.comm)
                            : made;
    MPI_Group_free(&all);
    if (members != MPI_GROUP_NULL) MPI_Group_free(&members);
    check_mpi(created, "MPI_Comm_create_group (the world group)");
  }
  return std::make_shared<MpiBackend>(std::move(group));
}

}  // namespace dist::real
