// <dist/testing.hpp>, kept so code that includes it need not change: the header is
// <dist/sim/testing.hpp>.
#pragma once

#include "dist/sim/testing.hpp"
