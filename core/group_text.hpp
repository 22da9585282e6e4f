// How the real backends name a group in their errors: "group of world ranks [0, 1, 2]".
#pragma once

#include <span>
#include <string>

namespace dist::core {

std::string group_text(std::span<const int> global_ranks);

}  // namespace dist::core
