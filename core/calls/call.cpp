// The call description's names, its describe(), the field comparison and the DesyncError text.
#include "core/calls/call.hpp"

#include "core/group_text.hpp"

namespace dist::core {

std::string_view to_string(CallKind kind) {
  switch (kind) {
    case CallKind::all_reduce: return "all_reduce";
    case CallKind::broadcast: return "broadcast";
    case CallKind::reduce: return "reduce";
    case CallKind::all_gather: return "all_gather";
    case CallKind::gather: return "gather";
    case CallKind::scatter: return "scatter";
    case CallKind::reduce_scatter: return "reduce_scatter";
    case CallKind::all_to_all: return "all_to_all";
    case CallKind::barrier: return "barrier";
    case CallKind::split: return "new_group";
    case CallKind::send: return "send";
    case CallKind::recv: return "recv";
    case CallKind::all_gather_v: return "all_gather_v";
    case CallKind::all_to_all_v: return "all_to_all_v";
    case CallKind::split_groups: return "new_subgroups";
  }
  return "unknown";
}

namespace {
bool has_op(CallKind k) {
  return k == CallKind::all_reduce || k == CallKind::reduce || k == CallKind::reduce_scatter;
}
bool has_data(CallKind k) {
  return k != CallKind::barrier && k != CallKind::split && k != CallKind::split_groups;
}
const char* root_name(CallKind k) {
  switch (k) {
    case CallKind::broadcast:
    case CallKind::scatter:
    case CallKind::recv: return "src";
    case CallKind::reduce:
    case CallKind::gather:
    case CallKind::send: return "dst";
    default: return nullptr;
  }
}
template <class T>
std::string braced(const char* name, std::span<const T> values) {
  std::string out = std::string(name) + "={";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "}";
}
}  // namespace

std::string describe(const CallDesc& c, std::span<const int> split_ranks,
                     std::span<const std::size_t> counts) {
  std::string text = std::string(to_string(c.kind)) + "(";
  std::string sep;
  auto add = [&](const std::string& s) {
    text += sep + s;
    sep = ", ";
  };
  if (has_op(c.kind)) add("op=" + std::string(to_string(c.op)));
  if (const char* r = root_name(c.kind))
    add(std::string(r) + "=" +
        (c.kind == CallKind::recv && c.root_or_peer == any_source
             ? std::string("any_source")
             : std::to_string(c.root_or_peer)));
  if (is_p2p(c.kind)) add("tag=" + std::to_string(c.tag));
  if ((c.kind == CallKind::split || c.kind == CallKind::split_groups) && !split_ranks.empty())
    add(braced("ranks", split_ranks));
  if (c.kind == CallKind::all_gather_v && !counts.empty()) add(braced("counts", counts));
  if (c.kind == CallKind::all_to_all_v) add(std::string(to_string(c.dtype)) + ", splits");
  else if (has_data(c.kind)) add(std::string(to_string(c.dtype)) + " x " + std::to_string(c.count));
  return text + ")";
}

std::string_view differing_field(const CallDesc& a, const CallDesc& b) {
  if (is_p2p(a.kind) && is_p2p(b.kind) && a.kind != b.kind) {
    if (a.dtype != b.dtype) return "dtype";
    if (a.count != b.count) return "count";
    return {};
  }
  if (a.kind != b.kind) return "kind";
  if (has_data(a.kind) && a.dtype != b.dtype) return "dtype";
  if (has_data(a.kind) && a.count != b.count) return "count";
  if (root_name(a.kind) && a.root_or_peer != b.root_or_peer) return root_name(a.kind);
  if (has_op(a.kind) && a.op != b.op) return "op";
  if (a.kind == CallKind::split && a.lists_hash != b.lists_hash) return "ranks";
  if (a.kind == CallKind::split_groups && a.lists_hash != b.lists_hash) return "groups";
  if (a.kind == CallKind::all_gather_v && a.lists_hash != b.lists_hash) return "counts";
  return {};
}

std::uint32_t hash_list(std::span<const std::uint64_t> values) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the values, then their number
  for (const std::uint64_t v : values) h = (h ^ v) * 0x100000001b3ULL;
  h = (h ^ values.size()) * 0x100000001b3ULL;
  const auto folded = static_cast<std::uint32_t>(h ^ (h >> 32));
  return folded ? folded : 1;
}

std::string group_name(std::span<const int> world_ranks) {
  std::string name = "group {";
  for (std::size_t i = 0; i < world_ranks.size(); ++i)
    name += (i ? ", " : "") + std::to_string(world_ranks[i]);
  return name + "}";
}

std::string desync_message(const std::string& group, std::uint64_t seq, std::string_view field,
                           const std::vector<RankCall>& calls) {
  std::string msg = seq == 0 ? "send/recv on " + group + ": the two sides disagree on '" +
                                   std::string(field) + "':"
                             : "collective on " + group + " #" + std::to_string(seq) +
                                   ": ranks disagree on '" + std::string(field) + "':";
  return msg + call_lines(calls);
}

std::string call_lines(const std::vector<RankCall>& calls) {
  constexpr std::size_t one_line_each = 16;
  std::string out;
  if (calls.size() <= one_line_each) {
    for (const RankCall& c : calls)
      out += "\n  rank " + std::to_string(c.rank) + " called " + c.call;
    return out;
  }
  RanksByText by_call;
  for (const RankCall& c : calls) by_call.add(c.rank, c.call);
  return by_call.lines(" called ");
}

}  // namespace dist::core
