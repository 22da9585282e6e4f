// Open MPI's binomial trees, as the model times them: all_reduce (in place, as dist calls it) up a
// binomial tree to rank 0, each round's receivers combining the whole buffer, then a binomial
// broadcast back down; reduce the same tree up; reduce_scatter that reduce, then rank 0 sends
// each rank its share. A tree's rank only sends or only receives in a round.
#include "model/open_mpi.hpp"

#include <cmath>

namespace dist::sim::model {

bool open_mpi_tree(core::CallKind kind) {
  using K = core::CallKind;
  return kind == K::all_reduce || kind == K::reduce || kind == K::reduce_scatter;
}

Cost open_mpi_collective(const Terms& t, core::CallKind kind, double size) {
  using K = core::CallKind;
  const double rounds = std::ceil(std::log2(t.p));
  const double up = rounds * (t.hop() + size / t.ring_rate + t.combine(size));
  switch (kind) {
    case K::all_reduce:
      return {t.overhead + up + rounds * (t.hop() + size / t.ring_rate), "binomial"};
    case K::reduce: return {t.overhead + up, "binomial"};
    default:  // reduce_scatter
      return {t.overhead + up + t.hop() + (t.p - 1) / t.p * size / t.ring_rate, "binomial+linear"};
  }
}

}  // namespace dist::sim::model
