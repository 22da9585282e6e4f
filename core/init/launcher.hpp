// The launcher environments of init_dist, exactly as MMEngine reads and sets them: pytorch
// (torchrun), slurm and mpi (OpenMPI's OMPI_COMM_WORLD_*, MPICH's PMI_*), plus infer_launcher and
// SLURM node-list expansion. Missing variables raise InvalidArgument naming the variable.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/init/rendezvous.hpp"

namespace dist::core {

// What the launcher says about this rank: where the ranks meet and who it is (passed on to the
// rendezvous by value), and its node (-1 / empty when the launcher says nothing).
struct LaunchInfo {
  RendezvousAddress address;
  int local_rank = -1;
  int local_size = -1;
  std::string node;  // a launcher-given node id (torchrun GROUP_RANK, SLURM_NODEID), if any
};

// MMEngine's _init_dist_<launcher> environment handling. It sets the variables MMEngine sets (a
// program may read them afterwards) and returns the rendezvous address by value:
// "pytorch": requires RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT;
// "mpi": requires OMPI_COMM_WORLD_LOCAL_RANK (or MPICH's MPI_LOCALRANKID), defaults MASTER_PORT
//   to 29500, requires MASTER_ADDR, sets WORLD_SIZE and RANK from OMPI_COMM_WORLD_SIZE/RANK (or
//   PMI_SIZE/PMI_RANK);
// "slurm": requires SLURM_PROCID, SLURM_NTASKS, SLURM_NODELIST; MASTER_PORT = `port` if given,
//   else the existing MASTER_PORT, else 29500; MASTER_ADDR = the first host of SLURM_NODELIST
//   unless already set; sets WORLD_SIZE, LOCAL_RANK (SLURM_LOCALID) and RANK.
// Any other launcher: InvalidArgument("Invalid launcher type: <launcher>").
DIST_API LaunchInfo prepare_launcher_env(std::string_view launcher, std::optional<int> port);

// MMEngine's infer_launcher: "pytorch" if WORLD_SIZE is set, else "slurm" if SLURM_NTASKS is,
// else "mpi" if OMPI_COMM_WORLD_LOCAL_RANK is, else "none".
std::string infer_launcher();

// The first host of a SLURM node list ("gpu[03-05,9],cpu1" -> "gpu03"), as
// `scontrol show hostname <list> | head -n1`.
std::string first_slurm_host(std::string_view nodelist);

}  // namespace dist::core
