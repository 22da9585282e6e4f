// One call description for every backend: the kinds of operation, the fixed-size fingerprint of
// one rank's call (what the ranks must agree on), its describe() and the DesyncError wording.
// sim's fabric, the DIST_DEBUG=detail check, the flight recorder and the timeout diagnosis all
// speak it, so one bug reads the same on every backend.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dist/export.hpp"
#include "dist/types.hpp"

namespace dist::core {

enum class CallKind : std::uint8_t {
  all_reduce,
  broadcast,
  reduce,
  all_gather,
  gather,
  scatter,
  reduce_scatter,
  all_to_all,
  barrier,
  split,
  send,
  recv,
  all_gather_v,
  all_to_all_v,  // with split sizes, which differ between ranks: its count is 0
  split_groups  // every group of a layout at once (new_subgroups, a mesh dim), hashed in lists_hash
};              // (keep split_groups last: call_kind_count counts up to it)
inline constexpr int call_kind_count = static_cast<int>(CallKind::split_groups) + 1;
// "all_reduce", ...; split reads "new_group", split_groups "new_subgroups".
DIST_API std::string_view to_string(CallKind kind);
inline bool is_p2p(CallKind k) { return k == CallKind::send || k == CallKind::recv; }

// One rank's side of a call, trivially copyable (sent as raw bytes, kept in the flight recorder).
// `root_or_peer` is the one rank a call names (a group rank): a rooted collective's root, a p2p
// call's peer (a send's dst, a recv's src); `count` the element count the participants must agree
// on; `lists_hash` a hash of a split's rank list or all_gather_v's counts (0: none), for checks
// that cannot carry the lists themselves.
struct CallDesc {
  CallKind kind = CallKind::barrier;
  DType dtype = DType::uint8;
  ReduceOp op = ReduceOp::sum;
  std::int32_t root_or_peer = -1;
  std::int32_t tag = 0;
  std::uint32_t lists_hash = 0;  // 32 bits: sim's Call (which extends this) stays two cache lines
  std::uint64_t count = 0;
};

inline CallDesc make_call(CallKind kind, DType dtype = DType::uint8, std::size_t count = 0,
                          int root_or_peer = -1, ReduceOp op = ReduceOp::sum, int tag = 0) {
  CallDesc d;
  d.kind = kind;
  d.dtype = dtype;
  d.op = op;
  d.root_or_peer = root_or_peer;
  d.tag = tag;
  d.count = count;
  return d;
}

// e.g. "all_reduce(op=sum, float32 x 8)", "send(dst=1, tag=0, int32 x 4)",
// "new_group(ranks={0,2})": the lists are written when given.
DIST_API std::string describe(const CallDesc& call, std::span<const int> split_ranks = {},
                              std::span<const std::size_t> counts = {});
// The first field where two ranks' calls differ ("kind", "dtype", "count", "src", "dst", "op",
// "ranks", "counts"), or empty when they agree. A send and a recv agree on dtype and count.
DIST_API std::string_view differing_field(const CallDesc& a, const CallDesc& b);
// The hash chain of a group's collectives: `chain` (of calls #1..n-1) extended by call #n. Ranks
// whose chains differ at the same number made different calls at or before it. Inline, three
// multiplications: it runs on every collective of every real backend.
inline std::uint64_t chain_hash(std::uint64_t chain, const CallDesc& c) {
  constexpr std::uint64_t prime = 0x100000001b3ULL;  // FNV-1a's, over three words of the fields
  const std::uint64_t head = std::uint64_t{static_cast<std::uint8_t>(c.kind)} |
                             std::uint64_t{static_cast<std::uint8_t>(c.dtype)} << 8 |
                             std::uint64_t{static_cast<std::uint8_t>(c.op)} << 16 |
                             std::uint64_t{static_cast<std::uint32_t>(c.root_or_peer)} << 32;
  std::uint64_t h = (chain ^ 0x9e3779b97f4a7c15ULL ^ head) * prime;
  h = (h ^ c.count) * prime;
  return (h ^ c.lists_hash) * prime;
}
// A hash of a list, for CallDesc::lists_hash (never 0).
DIST_API std::uint32_t hash_list(std::span<const std::uint64_t> values);

// How errors name a group made by new_group: "group {0, 2}" (its world ranks). The world group
// is "world".
DIST_API std::string group_name(std::span<const int> world_ranks);

// The DesyncError text of collective `seq` on `group`: "collective on world #3: ranks disagree on
// 'op':" then call_lines(calls). `calls` are the descriptions already written, with their world
// ranks.
struct RankCall {
  int rank = -1;
  std::string call;
};
// "\n  rank 1 called all_reduce(op=max, int32 x 1)" for each call; above 16 calls, ranks with the
// same call share a line, in the order of their first rank: "\n  ranks 0-65534 called ...".
DIST_API std::string call_lines(const std::vector<RankCall>& calls);
DIST_API std::string desync_message(const std::string& group, std::uint64_t seq,
                                    std::string_view field, const std::vector<RankCall>& calls);

}  // namespace dist::core
