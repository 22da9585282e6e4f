// What the ranks of an mpi group agree on before a collective moves any data: each rank's call
// (kind, dtype, count, root, op, lists) as three 64-bit words, compared in one MPI_Iallreduce of
// the words and their complements under MPI_MAX: a rank's call matches every other's exactly when
// the maxima are its own words and the maxima of the complements theirs, and when the calls
// differ no rank's do, so every rank learns it from the same reduction. Then every rank all_gathers
// its Declared record, from which each builds the same DesyncError naming every rank's call.
// MPI leaves collectives whose sizes differ undefined (Open MPI corrupts the heap), so no data
// call is posted before this agreement.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/calls/call.hpp"

namespace dist::real {

// A call as words (exact: no hash of the fields themselves).
using CallWords = std::array<std::uint64_t, 3>;
CallWords call_words(const core::CallDesc& call);
core::CallDesc call_from(const CallWords& words);

// The agreement's buffer: the words and their complements, reduced under MPI_MAX.
inline constexpr std::size_t agreement_words = 6;
using Agreement = std::array<std::uint64_t, agreement_words>;
Agreement agreement_of(const core::CallDesc& call);
// Whether the reduced agreement shows that every rank called `call`.
bool agreed(const core::CallDesc& call, const Agreement& reduced);

// One rank's side, all_gathered once the agreement failed, and after every uneven all_to_all's
// exchange of split sizes: its call, and the first peer whose split for this rank differs from
// this rank's own expectation.
struct Declared {
  CallWords call{};
  std::uint64_t split_peer = 0;    // the group rank + 1 of that peer; 0: none
  std::uint64_t peer_sends = 0;    // what that peer sends this rank
  std::uint64_t rank_expects = 0;  // what this rank's output split expects from it
};
static_assert(sizeof(Declared) == 6 * sizeof(std::uint64_t));

// The DesyncError text every rank builds from the gathered records (group rank r's at r;
// `world_ranks` names them): "ranks disagree on 'count':\n  rank 0 called ...", sim's words, or
// for splits "ranks disagree on the all_to_all splits:\n  rank 0 sends rank 1 2 element(s),
// where rank 1's output_splits expect 1". The call layer puts the call's group and number in
// front.
std::string disagreement(std::span<const Declared> records, std::span<const int> world_ranks);

}  // namespace dist::real
