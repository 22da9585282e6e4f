// Argument validation for every API call, in one place: group membership, ranks, ops, buffer
// sizes and devices. Each check throws InvalidArgument naming the function and the argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/backend_impl.hpp"
#include "core/context.hpp"
#include "dist/api.hpp"
#include "dist/types.hpp"

namespace dist::core {

// A resolved group: the backend is null (and size 1) when not distributed.
struct ResolvedGroup {
  detail::GroupState* group = nullptr;
  BackendImpl* backend = nullptr;
  int size = 1;
  int rank = 0;
};

// Resolves `group` against the calling rank's context; a group the caller is not a member of,
// or one that belongs to another rank or run, is an InvalidArgument.
ResolvedGroup resolve_group(const Group& group, const char* function);
// `value` (a src/dst/peer argument) must be a rank of a group of `size` ranks.
void check_rank(int value, int size, const char* function, const char* argument);
// Resolves the op and checks it is defined for `dtype`.
ReduceOp check_op(const OpArg& op, DType dtype, const char* function);
// A buffer must point somewhere when it holds elements, and be on a device the backend reaches.
void check_buffer(const ConstBuf& buffer, const BackendImpl* backend, const char* function,
                  const char* argument);
// `actual` elements where `expected` are required ("must hold <rule>").
void check_count(std::size_t actual, std::size_t expected, const char* function,
                 const char* argument, const char* rule);
void check_same_dtype(const ConstBuf& a, const ConstBuf& b, const char* function);
void check_divisible(std::size_t count, int size, const char* function, const char* argument);
// An uneven all_to_all's split sizes (`argument`): one per group rank, none negative, summing to
// the count of `buffer`. Returns them as element counts.
std::vector<std::size_t> check_splits(std::span<const std::int64_t> splits, int size,
                                      std::size_t count, const char* function, const char* argument,
                                      const char* buffer);
// A send's or recv's arguments: a member of `group`, `peer` (named `argument`) another rank of
// it, a non-negative tag, a buffer the backend reaches. Returns the resolved group. A receive
// (`receive`) may name dist::any_source as its peer where the backend receives from any source;
// with `self`, the peer may be the caller (batch_isend_irecv matches those itself).
ResolvedGroup check_p2p(const ConstBuf& data, int peer, int tag, const Group& group,
                        const char* function, const char* argument, bool receive = false,
                        bool self = false);
void check_tag(int tag, const char* function);
// `part` and `whole` (the two buffers of `function`) must not share memory, except that `part` may
// be exactly the caller's own slot of `whole`, starting at element `own_slot` (the in-place forms:
// all_gather's input, reduce_scatter's output); without `own_slot` no overlap is allowed.
void check_disjoint(const ConstBuf& part, const ConstBuf& whole,
                    std::optional<std::size_t> own_slot, const char* function,
                    const char* part_name, const char* whole_name);

}  // namespace dist::core
