// Test support for real backends inside one process: run_thread_world starts one thread per rank,
// each joining one world through a shared in-memory store, with its dist:: context bound to it.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <vector>

#include "dist/types.hpp"

namespace dist::real {

// Runs fn(rank) on n threads, one rank each, of a `backend` world connected through a HashStore.
// A rank's context is destroyed as soon as its fn returns or throws (so its peers see it leave).
// Returns each rank's error, null where fn returned normally; a failed connect counts as an error.
// InvalidArgument for sim, and for a backend whose ranks must be processes (mpi).
// With ranks_per_node > 0 (dividing n), the ranks also get local groups as if they ran on
// n / ranks_per_node machines of ranks_per_node ranks each, numbered node by node.
std::vector<std::exception_ptr> run_thread_world(dist::Backend backend, int n,
                                                 std::chrono::milliseconds timeout,
                                                 const std::function<void(int rank)>& fn,
                                                 int ranks_per_node = 0);

// Gives the ranks of the current world (every rank calls it, with its context current) local
// groups as if they ran on machines of `ranks_per_node` ranks each, numbered node by node, as
// init_dist would find them.
void make_local_groups(int ranks_per_node);

// run_thread_world, rethrowing the first error (in rank order); returns when every rank has
// finished.
void run_thread_world_or_throw(dist::Backend backend, int n, std::chrono::milliseconds timeout,
                               const std::function<void(int rank)>& fn);

}  // namespace dist::real
