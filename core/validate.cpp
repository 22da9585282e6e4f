// The argument checks of validate.hpp.
#include "core/validate.hpp"

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

Target resolve_group(const Group& group, const char* function) {
  Context* ctx = current_context();
  if (!ctx) {
    if (!group.is_default())
      throw InvalidArgument(std::string(function) +
                            ": a group was given but no distributed context is active");
    return {};
  }
  detail::GroupState* g = group.is_default() ? ctx->world.get() : group.state().get();
  if (g->owner != ctx)
    throw InvalidArgument(std::string(function) +
                          ": the group belongs to another rank or run (groups are per rank)");
  if (g->rank < 0)
    throw InvalidArgument(std::string(function) + ": rank " + std::to_string(ctx->rank) +
                          " is not a member of the group " + ranks_text(g->ranks));
  return {g, g->backend.get(), static_cast<int>(g->ranks.size()), g->rank};
}

void check_rank(int value, int size, const char* function, const char* argument) {
  if (value < 0 || value >= size)
    throw InvalidArgument(where(function, argument) + " = " + std::to_string(value) +
                          " is out of range for a group of " + std::to_string(size) + " ranks");
}

ReduceOp check_op(const OpArg& op, DType dtype, const char* function) {
  const ReduceOp resolved = op.resolve();
  if (!op_allowed(resolved, dtype))
    throw InvalidArgument(std::string(function) + ": reduce op '" +
                          std::string(to_string(resolved)) + "' is not defined for dtype " +
                          std::string(to_string(dtype)) + " (bitwise ops need an integer dtype)");
  return resolved;
}

void check_buffer(const Buf& buffer, const BackendImpl* backend, const char* function,
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

void check_same_dtype(const Buf& a, const Buf& b, const char* function) {
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

}  // namespace dist::core
