// dist::real's umbrella header: starting a process group on a real backend
// (<dist/real/init.hpp>) and spawning its processes (<dist/real/spawn.hpp>).
#pragma once

#include "dist/real/init.hpp"
#include "dist/real/spawn.hpp"
