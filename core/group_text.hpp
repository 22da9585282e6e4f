// How errors name a group and ranks: ranges of ranks ("0-3, 7", "0-65535 except 17") and ranks
// grouped by identical text, so a message on thousands of ranks stays a few lines.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dist/export.hpp"

namespace dist::core {

// "group of world ranks [0, 1, 2]"
DIST_API std::string group_text(std::span<const int> global_ranks);
// "0, 1" / "0-3, 7, 9, 10": runs of three or more consecutive ranks as ranges. An increasing list
// of 8 or more ranks whose holes take fewer entries than its runs reads "0-65535 except 17,
// 40000-40003". O(n).
DIST_API std::string rank_ranges(std::span<const int> ranks);
// "rank 2" / "ranks 1, 3" / "ranks 0-3, 7" / "ranks 0-63 except 17"
DIST_API std::string ranks_phrase(std::span<const int> ranks);

// Ranks grouped by identical text, the groups in the order of their first rank added: an error on
// thousands of ranks says "ranks 0-16, 18-63: <text>" once. A hash map: O(1) expected per add.
class DIST_API RanksByText {
 public:
  struct Group {
    std::string text;
    std::vector<int> ranks;
  };
  void add(int rank, const std::string& text);
  const std::vector<Group>& groups() const { return groups_; }
  // "\n  ranks 0-16, 18-63<between><text>" for each group, in order.
  std::string lines(std::string_view between) const;

 private:
  std::vector<Group> groups_;
  std::unordered_map<std::string, std::size_t> index_;
};

// Whom a timed-out call names in a real backend's TimeoutError: a p2p call its peer (a world
// rank: "rank 1 did not take part"), a collective nobody ("a peer did not take part"): the call
// layer above diagnoses a collective's timeout with the other ranks (core/calls/diagnosis.hpp).
struct Absentees {
  std::vector<int> ranks;
  std::string phrase;
};
DIST_API Absentees name_absentees(int peer);

}  // namespace dist::core
