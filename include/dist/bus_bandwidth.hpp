// <dist/bus_bandwidth.hpp>, kept so code that includes it need not change: the header is
// <dist/bench/bus_bandwidth.hpp>.
#pragma once

#include "dist/bench/bus_bandwidth.hpp"
