// A collective a rank gave up at its timeout (Work::wait's own, or the group's), recorded in the
// job's store so that a member still in that call, or one arriving later, learns who gave up
// instead of completing against a rank that left or waiting for it: the real backends that cannot
// cancel an engine's call (mpi, gloo) retire the group and record it here.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/store/store.hpp"
#include "dist/export.hpp"

namespace dist::core {

// How long the store may take to record or tell that a member gave up a collective.
inline constexpr std::chrono::milliseconds given_up_wait{1000};

// Records that world rank `me` gave up collective `index` (1-based, in the group's call order) of
// the group whose store keys live under `prefix`. A store that is gone is ignored.
DIST_API void record_given_up(Store& store, const std::string& prefix, std::uint64_t index, int me);

// The world rank that gave up collective `index` or one before it, of the group under `prefix`;
// -1 when none did (or the store does not answer: the call's own deadline decides then).
DIST_API int given_up_by(Store& store, const std::string& prefix, std::uint64_t index);

// The reason a call that rank `by` gave up cannot complete: "rank 1 gave up this collective at its
// timeout (<why>); the group is unusable: create a new process group".
DIST_API std::string given_up_reason(int by, const std::string& why);

}  // namespace dist::core
