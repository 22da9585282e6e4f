// How the real backends name a group and ranks in their errors.
#pragma once

#include <span>
#include <string>

#include "dist/export.hpp"

namespace dist::core {

// "group of world ranks [0, 1, 2]"
DIST_API std::string group_text(std::span<const int> global_ranks);
// "rank 2" / "ranks 1, 3" / "ranks 0-3, 7"
DIST_API std::string ranks_phrase(std::span<const int> ranks);

}  // namespace dist::core
