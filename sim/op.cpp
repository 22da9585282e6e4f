// Descriptions of calls and ops for error messages, and the fingerprint comparison.
#include "sim/op.hpp"

#include <algorithm>

#include "sim/communicator.hpp"

namespace dist::sim {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::all_reduce: return "all_reduce";
    case OpKind::broadcast: return "broadcast";
    case OpKind::reduce: return "reduce";
    case OpKind::all_gather: return "all_gather";
    case OpKind::gather: return "gather";
    case OpKind::scatter: return "scatter";
    case OpKind::reduce_scatter: return "reduce_scatter";
    case OpKind::all_to_all: return "all_to_all";
    case OpKind::barrier: return "barrier";
    case OpKind::split: return "new_group";
    case OpKind::send: return "send";
    case OpKind::recv: return "recv";
    case OpKind::all_gather_v: return "all_gather_v";
  }
  return "unknown";
}

namespace {
bool has_op(OpKind k) {
  return k == OpKind::all_reduce || k == OpKind::reduce || k == OpKind::reduce_scatter;
}
bool has_data(OpKind k) { return k != OpKind::barrier && k != OpKind::split; }
const char* root_name(OpKind k) {
  switch (k) {
    case OpKind::broadcast:
    case OpKind::scatter: return "src";
    case OpKind::reduce:
    case OpKind::gather:
    case OpKind::send: return "dst";
    case OpKind::recv: return "src";
    default: return nullptr;
  }
}
bool is_p2p(OpKind k) { return k == OpKind::send || k == OpKind::recv; }
}  // namespace

std::string Call::describe() const {
  std::string text = std::string(to_string(kind)) + "(";
  std::string sep;
  auto add = [&](const std::string& s) {
    text += sep + s;
    sep = ", ";
  };
  if (has_op(kind)) add("op=" + std::string(to_string(op)));
  if (const char* r = root_name(kind)) add(std::string(r) + "=" + std::to_string(root));
  if (is_p2p(kind)) add("tag=" + std::to_string(tag));
  if (kind == OpKind::split) {
    std::string ranks = "ranks={";
    for (std::size_t i = 0; i < split_ranks.size(); ++i)
      ranks += (i ? "," : "") + std::to_string(split_ranks[i]);
    add(ranks + "}");
  }
  if (kind == OpKind::all_gather_v) {
    std::string list = "counts={";
    for (std::size_t i = 0; i < counts.size(); ++i)
      list += (i ? "," : "") + std::to_string(counts[i]);
    add(list + "}");
  }
  if (has_data(kind)) add(std::string(to_string(dtype)) + " x " + std::to_string(count));
  return text + ")";
}

void Call::take(Call&& other) {
  kind = other.kind;
  dtype = other.dtype;
  op = other.op;
  root = other.root;
  tag = other.tag;
  count = other.count;
  in = other.in;
  out = other.out;
  start_us = other.start_us;
  if (!split_ranks.empty() || !other.split_ranks.empty())
    split_ranks = std::move(other.split_ranks);
  if (!counts.empty() || !other.counts.empty()) counts = std::move(other.counts);
  if (!injected_failure.empty() || !other.injected_failure.empty())
    injected_failure = std::move(other.injected_failure);
}

std::string_view differing_field(const Call& a, const Call& b) {
  if (is_p2p(a.kind) && is_p2p(b.kind) && a.kind != b.kind) {
    if (a.dtype != b.dtype) return "dtype";
    if (a.count != b.count) return "count";
    return {};
  }
  if (a.kind != b.kind) return "kind";
  if (has_data(a.kind) && a.dtype != b.dtype) return "dtype";
  if (has_data(a.kind) && a.count != b.count) return "count";
  if (root_name(a.kind) && a.root != b.root) return root_name(a.kind);
  if (has_op(a.kind) && a.op != b.op) return "op";
  if (a.kind == OpKind::split && a.split_ranks != b.split_ranks) return "ranks";
  if (a.kind == OpKind::all_gather_v && a.counts != b.counts) return "counts";
  return {};
}

int Op::index_of(int rank) const {
  const auto it = std::find(participants.begin(), participants.end(), rank);
  return it == participants.end() ? -1 : static_cast<int>(it - participants.begin());
}

std::string Op::describe(std::size_t i) const {
  std::string where = comm ? " on " + comm->name : "";
  if (!p2p) where += " #" + std::to_string(seq);
  return calls[i].describe() + where;
}

std::vector<int> Op::missing() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < participants.size(); ++i)
    if (!arrived[i]) out.push_back(participants[i]);
  return out;
}

}  // namespace dist::sim
