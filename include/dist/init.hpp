// <dist/init.hpp>, kept so code that includes it need not change: the header is
// <dist/real/init.hpp>.
#pragma once

#include "dist/real/init.hpp"
