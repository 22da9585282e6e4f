#include "core/group_text.hpp"

namespace dist::core {

std::string group_text(std::span<const int> global_ranks) {
  std::string text = "group of world ranks [";
  for (std::size_t i = 0; i < global_ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(global_ranks[i]);
  return text + "]";
}

std::string ranks_phrase(std::span<const int> ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

}  // namespace dist::core
