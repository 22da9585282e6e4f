// The argument checks of validate.hpp.
#include "core/validate.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

#include "dist/errors.hpp"

namespace dist::core {

namespace {
std::string where(const char* function, const char* argument) {
  return std::string(function) + ": argument '" + argument + "'";
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string out = "{";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "}";
}
}  // namespace

ResolvedGroup resolve_group(const Group& group, const char* function) {
  if (!group.is_default() && group.state()->destroyed)
    throw NotInitialized(std::string(function) +
                         ": the group's world was ended by destroy_dist(); make groups again "
                         "with new_group after the next init");
  Context* ctx = current_context();
  if (!ctx) {
    if (!group.is_default())
      throw InvalidArgument(std::string(function) +
                            ": a group was given but no distributed context is active");
    return {};
  }
  detail::GroupState* g = group.is_default() ? ctx->world.get() : group.state().get();
  if (g->aborted.load(std::memory_order_acquire))
    throw Aborted(std::string(function) + ": " + g->aborted_text);
  if (g->owner != ctx)
    throw InvalidArgument(std::string(function) +
                          ": the group belongs to another rank or run (groups are per rank)");
  if (g->rank < 0)
    throw InvalidArgument(std::string(function) + ": rank " + std::to_string(ctx->rank) +
                          " is not a member of the group " + ranks_text(*g->ranks));
  return {g, g->backend.get(), static_cast<int>(g->ranks->size()), g->rank};
}

void check_rank(int value, int size, const char* function, const char* argument) {
  if (value < 0 || value >= size)
    throw InvalidArgument(where(function, argument) + " = " + std::to_string(value) +
                          " is out of range for a group of " + std::to_string(size) + " ranks");
}

ReduceOp check_op(const OpArg& op, DType dtype, const char* function) {
  const ReduceOp resolved = op.resolve();
  if (op.premul_factor() && !is_floating(dtype))
    throw InvalidArgument(std::string(function) +
                          ": premul_sum is defined for floating dtypes "
                          "only, got " +
                          std::string(to_string(dtype)));
  if (!op_allowed(resolved, dtype))
    throw InvalidArgument(std::string(function) + ": reduce op '" +
                          std::string(to_string(resolved)) + "' is not defined for dtype " +
                          std::string(to_string(dtype)) + " (bitwise ops need an integer dtype)");
  return resolved;
}

void check_buffer(const ConstBuf& buffer, const BackendImpl* backend, const char* function,
                  const char* argument) {
  if (buffer.count > 0 && buffer.data == nullptr)
    throw InvalidArgument(where(function, argument) + " is null but holds " +
                          std::to_string(buffer.count) + " elements");
  const Device comm = backend ? backend->device() : Device::cpu();
  const bool reached = backend ? backend->reaches(buffer.device) : buffer.device == comm;
  if (buffer.count > 0 && !reached)
    throw InvalidArgument(where(function, argument) + " is on " + to_string(buffer.device) +
                          " but the backend communicates through " + to_string(comm) +
                          ", and this build of dist cannot stage between them");
}

void check_count(std::size_t actual, std::size_t expected, const char* function,
                 const char* argument, const char* rule) {
  if (actual != expected)
    throw InvalidArgument(where(function, argument) + " holds " + std::to_string(actual) +
                          " elements but must hold " + rule + " = " + std::to_string(expected));
}

void check_same_dtype(const ConstBuf& a, const ConstBuf& b, const char* function) {
  if (a.dtype != b.dtype)
    throw InvalidArgument(std::string(function) + ": input is " + std::string(to_string(a.dtype)) +
                          " but output is " + std::string(to_string(b.dtype)));
}

void check_divisible(std::size_t count, int size, const char* function, const char* argument) {
  if (size > 0 && count % static_cast<std::size_t>(size) != 0)
    throw InvalidArgument(where(function, argument) + " holds " + std::to_string(count) +
                          " elements, not divisible by the group size " + std::to_string(size));
}

void check_tag(int tag, const char* function) {
  if (tag < 0)
    throw InvalidArgument(std::string(function) + ": argument 'tag' = " + std::to_string(tag) +
                          " must be non-negative");
}

std::vector<std::size_t> check_splits(std::span<const std::int64_t> splits, int size,
                                      std::size_t count, const char* function, const char* argument,
                                      const char* buffer) {
  if (splits.size() != static_cast<std::size_t>(size))
    throw InvalidArgument(where(function, argument) + " has " + std::to_string(splits.size()) +
                          " entries for a group of " + std::to_string(size) +
                          " ranks (one split per group rank)");
  std::vector<std::size_t> counts;
  std::size_t sum = 0;
  for (std::size_t i = 0; i < splits.size(); ++i) {
    if (splits[i] < 0)
      throw InvalidArgument(where(function, argument) + "[" + std::to_string(i) +
                            "] = " + std::to_string(splits[i]) + " is negative");
    counts.push_back(static_cast<std::size_t>(splits[i]));
    sum += counts.back();
  }
  if (sum != count)
    throw InvalidArgument(where(function, argument) + " sums to " + std::to_string(sum) +
                          ", but '" + buffer + "' holds " + std::to_string(count) + " elements");
  return counts;
}

ResolvedGroup check_p2p(const ConstBuf& data, int peer, int tag, const Group& group,
                        const char* function, const char* argument, bool receive, bool self) {
  const auto t = resolve_group(group, function);
  if (receive && peer == any_source) {
    if (!t.backend->receives_from_any_source())
      throw InvalidArgument(where(function, argument) + " is any_source, which the " +
                            std::string(to_string(t.backend->kind())) +
                            " backend does not support (sim, gloo and mpi do)");
    if (t.size == 1)
      throw InvalidArgument(where(function, argument) +
                            " is any_source, but the group has no other rank to send");
  } else {
    check_rank(peer, t.size, function, argument);
  }
  check_tag(tag, function);
  if (peer == t.rank && !self)
    throw InvalidArgument(where(function, argument) + " is the caller's own rank");
  check_buffer(data, t.backend, function, "data");
  return t;
}

namespace {
// "[0x..., 0x...) (n elements)": a buffer's byte range, for check_disjoint's message.
std::string range_text(const ConstBuf& b) {
  char text[64];
  const auto begin = reinterpret_cast<std::uintptr_t>(b.data);
  std::snprintf(text, sizeof text, "[%#zx, %#zx)", static_cast<std::size_t>(begin),
                static_cast<std::size_t>(begin + b.bytes()));
  return text + std::string(" (") + std::to_string(b.count) + " elements)";
}
}  // namespace

void check_disjoint(const ConstBuf& part, const ConstBuf& whole,
                    std::optional<std::size_t> own_slot, const char* function,
                    const char* part_name, const char* whole_name) {
  if (part.count == 0 || whole.count == 0 || part.device != whole.device) return;
  const auto* p = static_cast<const std::byte*>(part.data);
  const auto* w = static_cast<const std::byte*>(whole.data);
  if (p + part.bytes() <= w || w + whole.bytes() <= p) return;  // disjoint
  const std::size_t element = whole.count ? whole.bytes() / whole.count : 0;
  if (own_slot && part.dtype == whole.dtype && p == w + *own_slot * element &&
      *own_slot + part.count <= whole.count)
    return;  // exactly the caller's own slot: the in-place form
  std::string allowed = " and may not overlap it";
  if (own_slot)
    allowed = " and may overlap it only as exactly this rank's slot, elements [" +
              std::to_string(*own_slot) + ", " + std::to_string(*own_slot + part.count) + ")";
  throw InvalidArgument(std::string(function) + ": argument '" + part_name + "' " +
                        range_text(part) + " overlaps argument '" + whole_name + "' " +
                        range_text(whole) + allowed);
}

}  // namespace dist::core
