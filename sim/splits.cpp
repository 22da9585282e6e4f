// Splits by layout (split_groups): the lists the ranks bring, held once per line, and the
// communicators made from them.
#include <string>
#include <tuple>
#include <vector>

#include "sim/world.hpp"

namespace dist::sim {

std::shared_ptr<const std::vector<int>> World::shared_rank_list(const core::Layout& layout) {
  std::lock_guard lock(rank_lists_mutex_);
  auto& held = rank_lists_[{layout.hash, layout.color}];
  if (auto line = held.ranks.lock();
      line && held.by_rule == layout.by_rule() && layout.own_is_from_this_layout(*line))
    return line;
  auto line = std::make_shared<const std::vector<int>>(layout.own());
  held = {line, layout.by_rule()};
  return line;
}

// The communicators of a split_groups op: one per list (each participant's call holds its line,
// shared with the line's other members when theirs agree: shared_rank_list), made by the list's
// first member's entry and shared by every member's.
void World::make_layout_comms(Op& op, bool locked) {
  std::unique_lock<std::mutex> lock;
  if (!locked) lock = lock_fabric();
  op.new_comms.assign(op.calls.size(), nullptr);
  for (std::size_t i = 0; i < op.calls.size(); ++i) {
    const auto list = op.calls[i].ranks();
    if (list.empty() || static_cast<std::size_t>(list.front()) != i) continue;
    std::vector<int> members;
    for (const int r : list) members.push_back(op.comm->members[static_cast<std::size_t>(r)]);
    std::string name = core::group_name(members);
    op.new_comms[i] = make_comm(std::move(name), std::move(members));
  }
  for (std::size_t i = 0; i < op.calls.size(); ++i) {
    const auto list = op.calls[i].ranks();
    if (!list.empty()) op.new_comms[i] = op.new_comms[static_cast<std::size_t>(list.front())];
  }
}

std::shared_ptr<Communicator> World::local_comm(const std::shared_ptr<Communicator>& parent,
                                                const std::vector<int>& ranks, int k) {
  auto lock = lock_fabric();
  const auto key = std::make_tuple(parent->id, ranks, k);
  auto& held = local_comms_[key];
  if (!held.comm) {
    std::vector<int> members;
    for (const int r : ranks) members.push_back(parent->members[static_cast<std::size_t>(r)]);
    std::string name = core::group_name(members);
    held.comm = make_comm(std::move(name), std::move(members));
  }
  auto comm = held.comm;
  if (++held.taken == ranks.size()) local_comms_.erase(key);
  return comm;
}

// A split's lists, once its communicators are made: every participant's call holds one (new_group's
// shared by all, a layout's by its line), and an op's call slots keep them while the op waits in
// the pool for its next use.
void World::release_lists(Op& op) {
  for (Call& call : op.calls) call.split_ranks.reset();
}

}  // namespace dist::sim
