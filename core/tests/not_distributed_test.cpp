// Placeholder for the tests of the "not distributed" defaults (world size 1, rank 0, no backend);
// the lead fills it in.
#include <gtest/gtest.h>
