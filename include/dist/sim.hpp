// dist::sim's umbrella header: the simulated cluster (<dist/sim/run.hpp>), the network a predicting
// run models (<dist/sim/network.hpp>) and the predictions (<dist/sim/predict.hpp>). The helpers for
// testing under GoogleTest and rapidcheck, <dist/sim/testing.hpp>, are apart: they need GoogleTest.
#pragma once

#include "dist/sim/network.hpp"
#include "dist/sim/predict.hpp"
#include "dist/sim/run.hpp"
