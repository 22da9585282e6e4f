// Group and rank-list texts of the errors: ranges, the "except" form and ranks grouped by text.
#include "core/group_text.hpp"

namespace dist::core {

namespace {
// "0, 1, 2"
std::string joined(std::span<const int> ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// Consecutive ranks first..last.
struct Run {
  int first = 0;
  int last = 0;
};
bool is_pair(const Run& r) { return static_cast<long long>(r.last) - r.first == 1; }

// "0-3, 7, 9, 10": a run of three or more as a range, a run of two as two entries.
std::string runs_text(std::span<const Run> runs) {
  std::string out;
  for (const Run& r : runs) {
    if (!out.empty()) out += ", ";
    out += std::to_string(r.first);
    if (r.last != r.first) out += (is_pair(r) ? ", " : "-") + std::to_string(r.last);
  }
  return out;
}
std::size_t entries(std::span<const Run> runs) {
  std::size_t n = 0;
  for (const Run& r : runs) n += is_pair(r) ? 2 : 1;
  return n;
}
}  // namespace

std::string group_text(std::span<const int> global_ranks) {
  return "group of world ranks [" + joined(global_ranks) + "]";
}

std::string rank_ranges(std::span<const int> ranks) {
  // The runs of the list and, while it increases, the holes between them: one pass, O(n).
  std::vector<Run> runs, holes;
  bool increasing = true;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && static_cast<long long>(ranks[j + 1]) - ranks[j] == 1) ++j;
    runs.push_back({ranks[i], ranks[j]});
    if (j + 1 < ranks.size()) {
      if (ranks[j + 1] <= ranks[j]) increasing = false;
      else holes.push_back({ranks[j] + 1, ranks[j + 1] - 1});
    }
    i = j + 1;
  }
  if (ranks.size() >= 8 && increasing && !holes.empty() && entries(holes) < entries(runs))
    return std::to_string(ranks.front()) + "-" + std::to_string(ranks.back()) + " except " +
           runs_text(holes);
  return runs_text(runs);
}

std::string ranks_phrase(std::span<const int> ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
}

void RanksByText::add(int rank, const std::string& text) {
  const auto [at, fresh] = index_.try_emplace(text, groups_.size());
  if (fresh) groups_.push_back({text, {}});
  groups_[at->second].ranks.push_back(rank);
}

std::string RanksByText::lines(std::string_view between) const {
  std::string out;
  for (const Group& g : groups_) {
    out += "\n  ";
    out += ranks_phrase(g.ranks);
    out += between;
    out += g.text;
  }
  return out;
}

Absentees name_absentees(int peer) {
  if (peer < 0) return {{}, "a peer did not take part"};
  return {{peer}, ranks_phrase(std::vector<int>{peer}) + " did not take part"};
}

}  // namespace dist::core
