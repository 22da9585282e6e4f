// BackendImpl, the interface every engine implements (c10d's "backend for implementers"; the
// public enum dist::Backend only names one): one object per rank per group, type-erased buffers,
// group-local ranks. Arguments arrive validated.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/layout.hpp"
#include "dist/api.hpp"
#include "dist/detail/erased.hpp"
#include "dist/errors.hpp"
#include "dist/types.hpp"

namespace dist::core {

// What a call writes (in place, an output, a receive) and what it only reads (an input, a send).
using Buf = detail::BufferRef;
using ConstBuf = detail::ConstBufferRef;

// What a call only reads, for an engine whose API takes a non-const pointer to a buffer it only
// reads (Gloo's options and unbound buffers): the one place the const goes.
inline void* engine_reads(const ConstBuf& b) { return const_cast<void*>(b.data); }

// The tags of the send/recv pieces of the composed all_to_all forms: negative, so they never
// match a user's (validated non-negative) tag.
inline constexpr int all_to_all_tag = -1;
inline constexpr int all_to_all_v_tag = -2;

class DIST_API BackendImpl {
 public:
  virtual ~BackendImpl() = default;

  virtual dist::Backend kind() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The device collectives communicate through; other data is staged through it.
  virtual Device device() const { return Device::cpu(); }
  // Whether the backend accepts buffers on `where` (it stages what is not on device() itself).
  virtual bool reaches(Device where) const { return where == device(); }

  // The primitives every backend provides. Each returns a Work that completes the operation.
  // Arguments come in the public API's order: what the call writes (a Buf), then what it only
  // reads (a ConstBuf), then the rest.
  virtual Work all_reduce(Buf data, ReduceOp op) = 0;
  virtual Work broadcast(Buf data, int root) = 0;
  // output holds size() × input.count elements, in rank order.
  virtual Work all_gather(Buf output, ConstBuf input) = 0;
  virtual Work send(ConstBuf data, int dst, int tag) = 0;
  // `src` may be dist::any_source where receives_from_any_source(); the Work's source() then
  // names the sender once complete.
  virtual Work recv(Buf data, int src, int tag) = 0;
  virtual bool receives_from_any_source() const { return false; }
  virtual Work barrier() = 0;
  // Creates the communicator of a new group (collective over this backend's ranks; `ranks` are
  // this backend's ranks, in the new group's order). Returns null on ranks outside the group.
  virtual std::shared_ptr<BackendImpl> split(const std::vector<int>& ranks) = 0;
  // Creates every group of a layout at once (new_subgroups, a device mesh's dimension): the
  // layout's lists are disjoint lists of this backend's ranks, the same on every rank; returns this
  // rank's backend in its list (layout.own()), null when it is in none. One collective, as
  // MPI_Comm_split and ncclCommSplit split by color (layout.color) and key (layout.position);
  // ranks whose layout.hash differs disagree on the layout. This default calls split() for each
  // list in order, making them with layout.list (a backend whose split does not communicate,
  // gloo's, needs no more).
  virtual std::shared_ptr<BackendImpl> split_groups(const Layout& layout);
  // new_group with use_local_synchronization: only the members of `ranks` (this backend's ranks,
  // the caller among them) call it, so it may communicate among them alone. The default raises
  // InvalidArgument naming the backend.
  virtual std::shared_ptr<BackendImpl> split_local(const std::vector<int>& ranks);
  // The world ranks of this backend's group in group order, when the backend keeps them in a list
  // its members can share (sim: its communicator's), else null. A group made by split or
  // split_groups then holds that list instead of a copy per rank (a world-sized group's copies:
  // n lists of n ranks).
  virtual std::shared_ptr<const std::vector<int>> shared_members() const { return nullptr; }

  // Operations with defaults composed from the primitives (core/backend_impl.cpp); a backend
  // overrides the ones its engine does natively.
  virtual Work reduce(Buf data, ReduceOp op, int root);
  // output (root only) holds size() × input.count elements.
  virtual Work gather(Buf output, ConstBuf input, int root);
  // input (root only) holds size() × output.count elements.
  virtual Work scatter(Buf output, ConstBuf input, int root);
  virtual Work reduce_scatter(Buf output, ConstBuf input, ReduceOp op);
  virtual Work all_to_all(Buf output, ConstBuf input);
  // Uneven all_to_all: input_counts[j] elements of input (after the earlier blocks) go to rank j,
  // and output_counts[i] elements come from rank i, in rank order. Every rank's
  // input_counts[j] must be rank j's output_counts[i]: a pair that disagrees is a DesyncError on
  // both of its ranks.
  virtual Work all_to_all_v(Buf output, ConstBuf input, std::span<const std::size_t> output_counts,
                            std::span<const std::size_t> input_counts);
  // Variable-size all_gather: rank r contributes counts[r] elements; output holds their sum.
  virtual Work all_gather_v(Buf output, ConstBuf input, std::span<const std::size_t> counts);
  // A barrier that, within `timeout`, raises monitored_barrier_timeout naming the world ranks
  // that had not arrived. This default waits on barrier() with the timeout; the call layer
  // meets in the job's store instead (core/calls/call_layer.cpp).
  virtual void monitored_barrier(std::chrono::milliseconds timeout, bool wait_all_ranks);

  // Recovery after a lost rank (core/fault_tolerance.cpp: dist::abort, shrink_group). Why this
  // backend cannot abort, shrink or reconfigure a group, or empty when it can; the default says it
  // cannot yet.
  virtual std::string recovery_refusal() const;
  // dist::abort on this rank (asked only when recovery_refusal() is empty): every pending call of
  // this rank on the group ends at once, and each peer waiting on this rank in one gets a
  // RankFailure naming it; waits for no peer. `why` is the Aborted error of this rank's calls.
  virtual void abort(const std::exception_ptr& why);
  // shrink_group's group of `survivors` (ranks of this group in the order of their global
  // ranks, the caller among them), made by them alone, with `timeout` its own (none: this
  // group's). Null when the backend has no way of its own: the front end then makes it as
  // new_group's use_local_synchronization does. With `abort_parent` (only where
  // shrink_aborts_parent()) the shrink itself ends this group's pending calls first, as
  // NCCL_SHRINK_ABORT does; the front end marks the group aborted after it. Elsewhere the front
  // end aborts the group before asking.
  virtual std::shared_ptr<BackendImpl> shrink(const std::vector<int>& survivors,
                                              std::optional<std::chrono::milliseconds> timeout,
                                              bool abort_parent);
  virtual bool shrink_aborts_parent() const { return false; }
};

// The name the members of `ranks` give the k-th group they make with that list by split_local
// ("l<hash>.<k>"), the same on each without asking the others: store prefixes and call-layer keys.
DIST_API std::string local_group_key(const std::vector<int>& ranks, int k);

// The text of BackendImpl::abort's `why` (the Aborted the front end made), or "dist::abort" when
// it carries none: what a backend's aborted calls say.
DIST_API std::string abort_text(const std::exception_ptr& why);

// backend.recv(data, src, tag), its Work told its source when `src` is a given rank (a backend
// that receives from any_source says which itself): the one way recv and irecv post.
Work post_recv(BackendImpl& backend, Buf data, int src, int tag);

// monitored_barrier's TimeoutError: the first of `missing` (world ranks, in group order), or all
// of them with `wait_all_ranks`.
DIST_API TimeoutError monitored_barrier_timeout(const std::vector<int>& missing,
                                                bool wait_all_ranks,
                                                std::chrono::milliseconds timeout);

}  // namespace dist::core
