// How the real backends name a group and ranks in their errors.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "dist/export.hpp"

namespace dist::core {

// "group of world ranks [0, 1, 2]"
DIST_API std::string group_text(std::span<const int> global_ranks);
// "rank 2" / "ranks 1, 3" / "ranks 0-3, 7"
DIST_API std::string ranks_phrase(std::span<const int> ranks);

// Whom a timed-out call names in a real backend's TimeoutError: a p2p call its peer (a world
// rank: "rank 1 did not take part"), a collective nobody ("a peer did not take part"): the call
// layer above diagnoses a collective's timeout with the other ranks (core/calls/diagnosis.hpp).
struct Absentees {
  std::vector<int> ranks;
  std::string phrase;
};
DIST_API Absentees name_absentees(int peer);

}  // namespace dist::core
