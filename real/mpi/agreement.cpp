// The words of a call, the agreement's check and the disagreement's text.
#include "real/mpi/agreement.hpp"

namespace dist::real {

CallWords call_words(const core::CallDesc& c) {
  return {std::uint64_t{static_cast<std::uint8_t>(c.kind)} |
              std::uint64_t{static_cast<std::uint8_t>(c.dtype)} << 8 |
              std::uint64_t{static_cast<std::uint8_t>(c.op)} << 16 |
              std::uint64_t{static_cast<std::uint32_t>(c.root_or_peer)} << 32,
          std::uint64_t{c.lists_hash} | std::uint64_t{static_cast<std::uint32_t>(c.tag)} << 32,
          c.count};
}

core::CallDesc call_from(const CallWords& w) {
  core::CallDesc c;
  c.kind = static_cast<core::CallKind>(w[0] & 0xFF);
  c.dtype = static_cast<DType>(w[0] >> 8 & 0xFF);
  c.op = static_cast<ReduceOp>(w[0] >> 16 & 0xFF);
  c.root_or_peer = static_cast<std::int32_t>(static_cast<std::uint32_t>(w[0] >> 32));
  c.lists_hash = static_cast<std::uint32_t>(w[1]);
  c.tag = static_cast<std::int32_t>(static_cast<std::uint32_t>(w[1] >> 32));
  c.count = w[2];
  return c;
}

Agreement agreement_of(const core::CallDesc& call) {
  const CallWords w = call_words(call);
  return {w[0], w[1], w[2], ~w[0], ~w[1], ~w[2]};
}

bool agreed(const core::CallDesc& call, const Agreement& reduced) {
  return reduced == agreement_of(call);
}

std::string disagreement(std::span<const Declared> records, std::span<const int> world_ranks) {
  const auto world = [&](std::size_t r) { return std::to_string(world_ranks[r]); };
  std::string splits;
  for (std::size_t r = 0; r < records.size(); ++r) {
    const Declared& d = records[r];
    if (d.split_peer == 0) continue;
    splits += "\n  rank " + world(d.split_peer - 1) + " sends rank " + world(r) + " " +
              std::to_string(d.peer_sends) + " element(s), where rank " + world(r) +
              "'s output_splits expect " + std::to_string(d.rank_expects);
  }
  if (!splits.empty()) return "ranks disagree on the all_to_all splits:" + splits;
  std::vector<core::RankCall> calls;
  std::string_view field;
  const core::CallDesc first = call_from(records.front().call);
  for (std::size_t r = 0; r < records.size(); ++r) {
    const core::CallDesc c = call_from(records[r].call);
    if (field.empty()) field = core::differing_field(first, c);
    calls.push_back({world_ranks[r], core::describe(c)});
  }
  if (field.empty()) field = "call";
  return "ranks disagree on '" + std::string(field) + "':" + core::call_lines(calls);
}

}  // namespace dist::real
