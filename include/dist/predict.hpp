// <dist/predict.hpp>, kept so code that includes it need not change: the header is
// <dist/sim/predict.hpp>.
#pragma once

#include "dist/sim/predict.hpp"
