// <dist/spawn.hpp>, kept so code that includes it need not change: the header is
// <dist/real/spawn.hpp>.
#pragma once

#include "dist/real/spawn.hpp"
