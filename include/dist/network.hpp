// <dist/network.hpp>, kept so code that includes it need not change: the header is
// <dist/sim/network.hpp>.
#pragma once

#include "dist/sim/network.hpp"
