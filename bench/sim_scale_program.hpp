// What each rank of sim_scale (issue 24) runs: barrier, all_reduce on the world, the node's group
// and each dimension of a data × pipeline × tensor mesh, and gather_object to rank 0, every result
// checked against a value the rank computes on its own.
#pragma once

#include <cstdint>
#include <string>

namespace dist::bench {

// The mesh data × pipeline × tensor of a world: tensor = 8 (one node), pipeline = min(16, n / 8),
// data = the rest (512 × 16 × 8 at 65,536 ranks).
struct MeshShape {
  int data = 1;
  int pipeline = 1;
  int tensor = 8;
};

// The dist calls rank_program makes on each rank: barrier, 2 all_reduce (world, node),
// init_device_mesh, 3 all_reduce (one per mesh dimension), gather_object.
inline constexpr int calls_per_rank = 8;

// The mesh of an n-rank world; an empty string when n is valid, else why not.
MeshShape mesh_shape(int ranks);
std::string check_world_size(int ranks);

// Runs the program on the calling rank; returns the number of wrong values it saw (0 when right).
std::int64_t rank_program(const MeshShape& shape);

}  // namespace dist::bench
