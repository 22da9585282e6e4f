// The umbrella header of dist: MMEngine's distributed-communication API for C++.
#pragma once

#include "dist/api.hpp"
#include "dist/collectives.hpp"
#include "dist/comm.hpp"
#include "dist/errors.hpp"
#include "dist/init.hpp"
#include "dist/objects.hpp"
#include "dist/p2p.hpp"
#include "dist/tensor.hpp"
#include "dist/types.hpp"
