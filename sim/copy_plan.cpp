// Execution plans of the ops that only move data (broadcast, gathers, scatter, all_to_all,
// send/recv). Nothing proportional to the number of (source, destination) pairs is materialised:
// a chunk index is mapped to its pairs arithmetically, so a 4096-rank all_gather costs no memory
// beyond its buffers. Small pairs are batched into one chunk, large ones split into blocks.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "sim/plan.hpp"

namespace dist::sim {

namespace {
constexpr std::size_t copy_block = 256 * 1024;

struct Copy {
  void* dst;
  const void* src;
};
// Copy p of an op whose copies all move the same number of bytes.
using PairFn = Copy (*)(const std::vector<Call>& calls, std::size_t p);

void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0 && dst != src) std::memcpy(dst, src, bytes);
}

std::size_t pair_bytes(const Op& op) {
  const Call& first = op.calls.front();
  return first.count * dtype_size(first.dtype);
}

// `pairs` copies of pair_bytes(op) each; pair p is pair(calls, p). A large pair is split into
// blocks of copy_block bytes, small pairs are batched into chunks of about copy_block bytes.
template <PairFn pair> Plan uniform_plan(const Op& op, std::size_t pairs) {
  Plan plan;
  const std::size_t bytes = pair_bytes(op);
  if (pairs == 0 || bytes == 0) return plan;
  if (bytes >= copy_block) {
    const std::size_t blocks = (bytes + copy_block - 1) / copy_block;
    plan.chunks = pairs * blocks;
    plan.run = [](const Op& o, std::size_t c) {
      const std::size_t b = pair_bytes(o);
      const std::size_t blocks_per_pair = (b + copy_block - 1) / copy_block;
      const Copy t = pair(o.calls, c / blocks_per_pair);
      const std::size_t off = (c % blocks_per_pair) * copy_block;
      copy_bytes(static_cast<std::byte*>(t.dst) + off, static_cast<const std::byte*>(t.src) + off,
                 std::min(copy_block, b - off));
    };
  } else {
    const std::size_t per_chunk = copy_block / bytes;
    plan.chunks = (pairs + per_chunk - 1) / per_chunk;
    plan.run = [pairs](const Op& o, std::size_t c) {
      const std::size_t b = pair_bytes(o);
      const std::size_t per = copy_block / b;
      for (std::size_t p = c * per; p < std::min(pairs, (c + 1) * per); ++p) {
        const Copy t = pair(o.calls, p);
        copy_bytes(t.dst, t.src, b);
      }
    };
  }
  return plan;
}

std::size_t root_of(const std::vector<Call>& calls) {
  return static_cast<std::size_t>(calls.front().root_or_peer);
}

// The copies of each op, with dst and src as participant indexes.
Copy broadcast_pair(const std::vector<Call>& c, std::size_t p) {  // every rank but the root
  const std::size_t root = root_of(c);
  const std::size_t dst = p < root ? p : p + 1;
  return {c[dst].out, c[root].in};
}
Copy all_gather_pair(const std::vector<Call>& c, std::size_t p) {
  const std::size_t world = c.size(), dst = p / world, src = p % world;
  return {out_at(c[dst], src * c.front().count), c[src].in};
}
Copy gather_pair(const std::vector<Call>& c, std::size_t src) {
  return {out_at(c[root_of(c)], src * c.front().count), c[src].in};
}
Copy scatter_pair(const std::vector<Call>& c, std::size_t dst) {
  return {c[dst].out, in_at(c[root_of(c)], dst * c.front().count)};
}
Copy all_to_all_pair(const std::vector<Call>& c, std::size_t p) {
  const std::size_t world = c.size(), dst = p / world, src = p % world;
  const std::size_t n = c.front().count;
  return {out_at(c[dst], src * n), in_at(c[src], dst * n)};
}
Copy p2p_pair(const std::vector<Call>& c, std::size_t) {  // calls[0] is the send, calls[1] the recv
  return {c[1].out, c[0].in};
}

// all_gather_v: chunk d fills destination d with every source's contribution.
Plan gather_v_plan(const Op& op) {
  const Call& first = op.calls.front();
  Plan plan;
  if (first.count == 0) return plan;
  auto offsets = std::make_shared<std::vector<std::size_t>>(first.counts.size(), 0);
  for (std::size_t i = 1; i < offsets->size(); ++i)
    (*offsets)[i] = (*offsets)[i - 1] + first.counts[i - 1];
  plan.chunks = op.calls.size();
  plan.run = [offsets](const Op& o, std::size_t dst) {
    const Call& f = o.calls.front();
    for (std::size_t src = 0; src < o.calls.size(); ++src)
      copy_bytes(out_at(o.calls[dst], (*offsets)[src]), o.calls[src].in,
                 f.counts[src] * dtype_size(f.dtype));
  };
  return plan;
}
}  // namespace

Plan copy_plan(const Op& op) {
  const std::size_t world = op.calls.size();
  switch (op.calls.front().kind) {
    case OpKind::broadcast: return uniform_plan<broadcast_pair>(op, world - 1);
    case OpKind::all_gather: return uniform_plan<all_gather_pair>(op, world * world);
    case OpKind::gather: return uniform_plan<gather_pair>(op, world);
    case OpKind::scatter: return uniform_plan<scatter_pair>(op, world);
    case OpKind::all_to_all: return uniform_plan<all_to_all_pair>(op, world * world);
    case OpKind::all_gather_v: return gather_v_plan(op);
    case OpKind::send:
    case OpKind::recv: return uniform_plan<p2p_pair>(op, 1);
    default: return {};
  }
}

}  // namespace dist::sim
