// Layouts built by rule (a mesh's lines, consecutive blocks) or from explicit lists: each rank
// computes its own list, its color and the layout's fingerprint without the other lists.
#include "core/layout.hpp"

#include <algorithm>
#include <utility>

#include "core/calls/call.hpp"

namespace dist::core {

namespace {
// Tags the fingerprint of a strided layout, so it is not that of a short explicit list.
constexpr std::uint64_t strided_tag = 0x5354524944454431ULL;
}  // namespace

std::vector<int> Layout::own() const {
  if (color < 0) return {};
  if (!by_rule()) return list(static_cast<std::size_t>(color));
  std::vector<int> ranks(static_cast<std::size_t>(size));
  for (int k = 0; k < size; ++k) ranks[static_cast<std::size_t>(k)] = first + k * stride;
  return ranks;
}

bool Layout::own_is(const std::vector<int>& ranks) const {
  if (ranks.size() != static_cast<std::size_t>(size)) return false;
  if (!by_rule()) return color >= 0 && ranks == list(static_cast<std::size_t>(color));
  for (int k = 0; k < size; ++k)
    if (ranks[static_cast<std::size_t>(k)] != first + k * stride) return false;
  return true;
}

bool Layout::own_is_from_this_layout(const std::vector<int>& ranks) const {
  if (!by_rule()) return own_is(ranks);
  return ranks.size() == static_cast<std::size_t>(size) &&
         (ranks.empty() || (ranks.front() == first && ranks.back() == first + (size - 1) * stride));
}

std::uint32_t layout_hash(const std::vector<std::vector<int>>& lists) {
  std::vector<std::uint64_t> flat;
  for (const auto& ranks : lists) {
    flat.push_back(ranks.size());
    flat.insert(flat.end(), ranks.begin(), ranks.end());
  }
  return hash_list(flat);
}

// The lines start at the ranks whose coordinate (rank / stride % length) is 0; in ascending order,
// the one at base = outer × block + inner (inner < stride) is number outer × stride + inner.
Layout strided_layout(int world, int length, int stride, int rank) {
  const long long block = static_cast<long long>(length) * stride;
  Layout layout;
  const std::uint64_t description[] = {strided_tag, static_cast<std::uint64_t>(world),
                                       static_cast<std::uint64_t>(length),
                                       static_cast<std::uint64_t>(stride)};
  layout.hash = hash_list(description);
  layout.count = static_cast<std::size_t>(world / length);
  layout.list = [length, stride, block](std::size_t i) {
    const long long outer = static_cast<long long>(i) / stride;
    const long long base = outer * block + static_cast<long long>(i) % stride;
    std::vector<int> line(static_cast<std::size_t>(length));
    for (int k = 0; k < length; ++k)
      line[static_cast<std::size_t>(k)] =
          static_cast<int>(base + static_cast<long long>(k) * stride);
    return line;
  };
  if (rank < 0 || rank >= world) return layout;
  const int coordinate = rank / stride % length;
  const int base = rank - coordinate * stride;
  layout.color = static_cast<int>(base / block * stride + base % stride);
  layout.position = coordinate;
  layout.size = length;
  layout.first = base;
  layout.stride = stride;
  return layout;
}

Layout mesh_layout(std::span<const int> shape, std::size_t dim, int rank) {
  int stride = 1;  // row-major: the product of the later dimensions
  for (std::size_t d = dim + 1; d < shape.size(); ++d) stride *= shape[d];
  int world = stride;
  for (std::size_t d = 0; d <= dim; ++d) world *= shape[d];
  return strided_layout(world, shape[dim], stride, rank);
}

Layout listed_layout(std::shared_ptr<const std::vector<std::vector<int>>> shared, int rank) {
  const auto& lists = *shared;
  Layout layout;
  layout.hash = layout_hash(lists);
  layout.count = lists.size();
  layout.list = [shared](std::size_t i) { return (*shared)[i]; };
  for (std::size_t i = 0; i < lists.size(); ++i) {
    const auto it = std::find(lists[i].begin(), lists[i].end(), rank);
    if (it == lists[i].end()) continue;
    layout.color = static_cast<int>(i);
    layout.position = static_cast<int>(it - lists[i].begin());
    layout.size = static_cast<int>(lists[i].size());
    break;
  }
  return layout;
}

}  // namespace dist::core
