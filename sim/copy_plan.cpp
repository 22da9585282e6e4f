// Execution plans of the ops that only move data (broadcast, gathers, scatter, all_to_all,
// send/recv). Nothing proportional to the number of (source, destination) pairs is materialised:
// a chunk index is mapped to its pairs arithmetically, so a 4096-rank all_gather costs no memory
// beyond its buffers. Small pairs are batched into one chunk, large ones split into blocks.
#include <cstring>
#include <functional>
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


void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0 && dst != src) std::memcpy(dst, src, bytes);
}

// `pairs` copies of `bytes` each; pair p is copy(p).
Plan uniform_plan(std::size_t pairs, std::size_t bytes, std::function<Copy(std::size_t)> copy) {
  Plan plan;
  if (pairs == 0 || bytes == 0) return plan;
  if (bytes >= copy_block) {
    const std::size_t blocks = (bytes + copy_block - 1) / copy_block;
    plan.chunks = pairs * blocks;
    plan.run = [copy = std::move(copy), blocks, bytes](std::size_t c) {
      const Copy t = copy(c / blocks);
      const std::size_t off = (c % blocks) * copy_block;
      copy_bytes(static_cast<std::byte*>(t.dst) + off, static_cast<const std::byte*>(t.src) + off,
                 std::min(copy_block, bytes - off));
    };
  } else {
    const std::size_t per_chunk = copy_block / bytes;
    plan.chunks = (pairs + per_chunk - 1) / per_chunk;
    plan.run = [copy = std::move(copy), per_chunk, pairs, bytes](std::size_t c) {
      for (std::size_t p = c * per_chunk; p < std::min(pairs, (c + 1) * per_chunk); ++p) {
        const Copy t = copy(p);
        copy_bytes(t.dst, t.src, bytes);
      }
    };
  }
  return plan;
}

// all_gather_v: chunk d fills destination d with every source's contribution.
Plan gather_v_plan(std::shared_ptr<const std::vector<Call>> calls) {
  const Call& first = calls->front();
  auto offsets = std::make_shared<std::vector<std::size_t>>(first.counts.size(), 0);
  for (std::size_t i = 1; i < offsets->size(); ++i)
    (*offsets)[i] = (*offsets)[i - 1] + first.counts[i - 1];
  Plan plan;
  if (first.count == 0) return plan;
  plan.chunks = calls->size();
  plan.run = [calls, offsets](std::size_t dst) {
    const Call& f = calls->front();
    for (std::size_t src = 0; src < calls->size(); ++src)
      copy_bytes(out_at((*calls)[dst], (*offsets)[src]), (*calls)[src].in,
                 f.counts[src] * dtype_size(f.dtype));
  };
  return plan;
}
}  // namespace

Plan copy_plan(const Op& op) {
  auto calls = std::make_shared<const std::vector<Call>>(op.calls);
  const Call& first = calls->front();
  const std::size_t world = calls->size();
  const std::size_t n = first.count;
  const std::size_t bytes = n * dtype_size(first.dtype);
  const auto root = static_cast<std::size_t>(first.root);
  const auto& c = *calls;
  switch (first.kind) {
    case OpKind::broadcast:  // every rank but the root, from the root
      return uniform_plan(world - 1, bytes, [calls, root](std::size_t p) {
        const std::size_t dst = p < root ? p : p + 1;
        return Copy{(*calls)[dst].out, (*calls)[root].in};
      });
    case OpKind::all_gather:
      return uniform_plan(world * world, bytes, [calls, world, n](std::size_t p) {
        const std::size_t dst = p / world, src = p % world;
        return Copy{out_at((*calls)[dst], src * n), (*calls)[src].in};
      });
    case OpKind::gather:
      return uniform_plan(world, bytes, [calls, root, n](std::size_t src) {
        return Copy{out_at((*calls)[root], src * n), (*calls)[src].in};
      });
    case OpKind::scatter:
      return uniform_plan(world, bytes, [calls, root, n](std::size_t dst) {
        return Copy{(*calls)[dst].out, in_at((*calls)[root], dst * n)};
      });
    case OpKind::all_to_all:
      return uniform_plan(world * world, bytes, [calls, world, n](std::size_t p) {
        const std::size_t dst = p / world, src = p % world;
        return Copy{out_at((*calls)[dst], src * n), in_at((*calls)[src], dst * n)};
      });
    case OpKind::all_gather_v:
      return gather_v_plan(calls);
    case OpKind::send:
    case OpKind::recv:  // calls[0] is the send, calls[1] the recv
      return uniform_plan(1, bytes, [out = c[1].out, in = c[0].in](std::size_t) {
        return Copy{out, in};
      });
    default:
      return {};
  }
}

}  // namespace dist::sim
