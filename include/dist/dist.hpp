// The umbrella header of dist: MMEngine's distributed-communication API for C++, everything
// dist::dist defines. Bringing up a real world is <dist/init.hpp> (dist::real); the simulated
// cluster is <dist/sim.hpp> (dist::sim).
#pragma once

#include "dist/api.hpp"
#include "dist/collectives.hpp"
#include "dist/comm.hpp"
#include "dist/errors.hpp"
#include "dist/fault_tolerance.hpp"
#include "dist/mesh.hpp"
#include "dist/objects.hpp"
#include "dist/p2p.hpp"
#include "dist/tensor.hpp"
#include "dist/types.hpp"
