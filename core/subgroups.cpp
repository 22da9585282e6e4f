// Subgroups: the groups of a layout as new_subgroups returns them. The caller's own group is kept;
// any other is made when asked for (its ranks from the layout's rule, no backend), so a rank never
// holds a list as long as the number of subgroups.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/layout.hpp"
#include "dist/errors.hpp"
#include "dist/mesh.hpp"

namespace dist::detail {

struct SubgroupsState {
  std::size_t count = 0;
  std::size_t own = 0;  // the index of `mine`
  Group mine;
  std::function<std::vector<int>(std::size_t)> list;
  const void* owner = nullptr;  // the Context the groups belong to
};

}  // namespace dist::detail

namespace dist {

Subgroups::Subgroups(std::shared_ptr<const detail::SubgroupsState> state)
    : state_(std::move(state)) {}

std::size_t Subgroups::size() const { return state_ ? state_->count : 0; }

Group Subgroups::operator[](std::size_t i) const {
  if (i >= size())
    throw InvalidArgument("Subgroups: index " + std::to_string(i) + " is out of range for a layout of " +
                          std::to_string(size()) + " groups");
  if (i == state_->own) return state_->mine;
  auto group = std::make_shared<detail::GroupState>();
  group->ranks = std::make_shared<const std::vector<int>>(state_->list(i));
  group->owner = state_->owner;  // rank -1, no backend: the caller is not a member
  return Group(std::move(group));
}

std::vector<Group> Subgroups::to_vector() const {
  std::vector<Group> all;
  all.reserve(size());
  for (std::size_t i = 0; i < size(); ++i) all.push_back((*this)[i]);
  return all;
}

namespace core {

Subgroups layout_subgroups(const Layout& layout, const Group& mine) {
  auto state = std::make_shared<detail::SubgroupsState>();
  state->count = layout.count;
  state->own = layout.color < 0 ? 0 : static_cast<std::size_t>(layout.color);
  state->mine = mine;
  state->list = layout.list;
  state->owner = mine.state() ? mine.state()->owner : nullptr;
  return Subgroups(std::move(state));
}

}  // namespace core
}  // namespace dist
