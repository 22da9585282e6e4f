// DIST_DEBUG=detail fingerprints for the real backends (gloo, nccl): before each collective the
// ranks all_gather what they call and, if any differ, all raise the same DesyncError. Without it a
// mismatch times out, or (different counts) the library aborts the process, as under torch.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dist/export.hpp"
#include "dist/types.hpp"

namespace dist::core {

// A fixed-size, trivially copyable description of a collective call (sent as raw bytes).
struct Fingerprint {
  std::uint32_t kind = 0;   // index into the kind names
  std::uint32_t dtype = 0;  // DType, or UINT32_MAX for none
  std::uint64_t count = 0;
  std::int32_t root = -1;
  std::int32_t op = -1;     // ReduceOp, or -1 for none
};

// `kind` is one of all_reduce, broadcast, reduce, all_gather, all_gather_v, gather, scatter,
// all_to_all, barrier, reduce_scatter.
DIST_API Fingerprint fingerprint(const char* kind, std::optional<DType> dtype = {},
                                 std::size_t count = 0, int root = -1,
                                 std::optional<ReduceOp> op = {});
DIST_API const char* kind_name(const Fingerprint& f);
// "all_reduce(int32, count 10, op sum)"
std::string describe(const Fingerprint& f);

// Whether DIST_DEBUG asks for fingerprint checks ("detail", any case).
DIST_API bool fingerprints_enabled();

// Throws DesyncError when the ranks' fingerprints differ: names the first field that differs and
// lists every rank's call. `operation` reads like "collective #12 on the group of world ranks [0, 1]".
DIST_API void check_fingerprints(std::span<const Fingerprint> all,
                                 const std::vector<int>& global_ranks,
                                 const std::string& operation);

}  // namespace dist::core
