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
  // Runs of three or more consecutive ranks read as ranges: "ranks 0-3, 7".
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(ranks[i]);
    if (j - i >= 2) {
      out += "-" + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      ++i;
    }
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + out;
}

Absentees name_absentees(int peer) {
  if (peer < 0) return {{}, "a peer did not take part"};
  return {{peer}, ranks_phrase(std::vector<int>{peer}) + " did not take part"};
}

}  // namespace dist::core
