#include "core/group_text.hpp"

namespace dist::core {

namespace {
// "0, 1, 2"
std::string joined(std::span<const int> ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}
}  // namespace

std::string group_text(std::span<const int> global_ranks) {
  return "group of world ranks [" + joined(global_ranks) + "]";
}

std::string ranks_phrase(std::span<const int> ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + joined(ranks);
}

}  // namespace dist::core
