// Timing under mpirun, shared by the MPI baseline and the mpi pairs: the slowest rank's time for
// a batch of calls, started together from a barrier (MPI's own calls: <dist/bench_timing.hpp>'s
// slowest_rank_seconds times dist's).
#pragma once

#include <mpi.h>

namespace dist::bench {

template <class Op>
double mpi_slowest_rank_seconds(Op&& op, int reps) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < reps; ++i) op();
  double mine = MPI_Wtime() - t0, worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

}  // namespace dist::bench
