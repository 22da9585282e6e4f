// MpiBackend's collectives and groups: each collective stages the caller's buffers in scratch its
// Work owns, posts MPI's non-blocking call on the scratch and copies the output back on completion,
// so a timed-out operation that MPI finishes later writes only into memory dist still owns.
#include "real/mpi/backend.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include "core/calls/call_of.hpp"
#include "core/group_text.hpp"
#include "core/host_reduce.hpp"
#include "core/store/join.hpp"
#include "real/mpi/mapping.hpp"

namespace dist::real {

namespace call_of = core::call_of;

namespace {

// A collective's scratch: `head` bytes of its own (16-aligned) then the caller's input, copied in,
// then room for its output. Staged regions never overlap, whatever the caller's buffers do.
struct Staged {
  Scratch scratch;
  std::byte* head = nullptr;
  std::byte* in = nullptr;
  std::byte* out = nullptr;
};

// The input's room is never empty, so the staged input and output never share an address: Open
// MPI's non-blocking collectives (libnbc) take a send buffer equal to the receive buffer for
// MPI_IN_PLACE, and an uneven all_to_all of a rank that sends nothing then exchanged its receive
// counts both ways and hung its peers.
// `input` (empty: none) is copied in; `out_bytes` is the output's room.
Staged stage(core::ConstBuf input, std::size_t out_bytes, std::size_t head = 0) {
  head = (head + 15) / 16 * 16;
  const std::size_t in_bytes = input.bytes();
  const std::size_t in_room = std::max<std::size_t>((in_bytes + 15) / 16 * 16, 16);
  Staged s;
  s.scratch = Scratch(head + in_room + out_bytes);
  s.head = s.scratch.data();
  s.in = s.head + head;
  s.out = s.in + in_room;
  if (in_bytes > 0) std::memcpy(s.in, input.data, in_bytes);
  return s;
}

// Copies the staged output at `from` to the caller's `to` once MPI completed, then runs `then`.
Finish copy_out(core::Buf to, const std::byte* from, Finish then = {}) {
  return [to, from, then = std::move(then)](const MPI_Status& status) {
    if (to.bytes() > 0) std::memcpy(to.data, from, to.bytes());
    if (then) then(status);
  };
}

// A mean's division of the caller's `data` over `world` ranks (nothing for other ops).
Finish mean_of(core::Buf data, ReduceOp op, int world) {
  if (op != ReduceOp::mean) return {};
  return [data, world](const MPI_Status&) {
    core::finish_mean(data.data, data.count, data.dtype, world);
  };
}

}  // namespace

MpiBackend::MpiBackend(MpiGroupSpec spec) : comm_(std::make_shared<MpiComm>(std::move(spec))) {
  auto lock = mpi_lock();
  int* upper = nullptr;
  int found = 0;
  if (MPI_Comm_get_attr(comm_->handle(), MPI_TAG_UB, &upper, &found) == MPI_SUCCESS && found && upper)
    tag_limit_ = *upper;
}

Work MpiBackend::collective(const core::CallDesc& call, Post post, Finish finish, Scratch scratch,
                            Splits splits) {
  auto c = std::make_shared<Collective>();
  c->call = call;
  if (!comm_->usable()) comm_->throw_unusable(std::string(core::to_string(call.kind)));
  c->deadline = Clock::now() + comm_->spec().timeout;
  c->post = std::move(post);
  c->scratch = std::move(scratch);
  c->sends = std::move(splits.sends);
  c->expects = std::move(splits.expects);
  comm_->sequence().start(c);
  return Work(std::make_shared<CollectiveWork>(comm_, std::move(c), std::move(finish)));
}

Work MpiBackend::all_reduce(core::Buf data, ReduceOp op) {
  const int n = mpi_count(data.count, "all_reduce");
  Staged s = stage(data, 0);
  std::byte* buf = s.in;
  const DType dtype = data.dtype;
  return collective(
      call_of::all_reduce(data, op),
      [=, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Iallreduce(MPI_IN_PLACE, buf, n, mpi_datatype(dtype), mpi_op(dtype, op), comm, r);
      },
      copy_out(data, buf, mean_of(data, op, size())), std::move(s.scratch));
}

Work MpiBackend::broadcast(core::Buf data, int root) {
  const int n = mpi_count(data.count, "broadcast");
  const bool at_root = rank() == root;
  Staged s = at_root ? stage(data, 0) : stage({}, data.bytes());
  std::byte* buf = at_root ? s.in : s.out;
  const MPI_Datatype type = mpi_datatype(data.dtype);
  return collective(
      call_of::broadcast(data, root),
      [=, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Ibcast(buf, n, type, root, comm, r);
      },
      at_root ? Finish{} : copy_out(data, buf), std::move(s.scratch));
}

Work MpiBackend::reduce(core::Buf data, ReduceOp op, int root) {
  const int n = mpi_count(data.count, "reduce");
  const bool at_root = rank() == root;
  Staged s = stage(data, 0);
  std::byte* buf = s.in;
  const DType dtype = data.dtype;
  return collective(
      call_of::reduce(data, op, root),
      [=, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Ireduce(at_root ? MPI_IN_PLACE : buf, at_root ? buf : nullptr, n,
                       mpi_datatype(dtype), mpi_op(dtype, op), root, comm, r);
      },
      at_root ? copy_out(data, buf, mean_of(data, op, size())) : Finish{}, std::move(s.scratch));
}

Work MpiBackend::all_gather(core::Buf output, core::ConstBuf input) {
  const int n = mpi_count(input.count, "all_gather");
  const MPI_Datatype type = mpi_datatype(input.dtype);
  Staged s = stage(input, output.bytes());
  return collective(
      call_of::all_gather(input),
      [=, in = s.in, out = s.out, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Iallgather(in, n, type, out, n, type, comm, r);
      },
      copy_out(output, s.out), std::move(s.scratch));
}

Work MpiBackend::all_gather_v(core::Buf output, core::ConstBuf input,
                              std::span<const std::size_t> counts) {
  // MPI reads the count and offset arrays until completion: they are staged too, ahead of the data.
  Staged s = stage(input, output.bytes(), 2 * counts.size() * sizeof(int));
  auto* sizes = reinterpret_cast<int*>(s.head);
  int* offsets = sizes + counts.size();
  std::size_t offset = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    sizes[i] = mpi_count(counts[i], "all_gather_v");
    offsets[i] = mpi_count(offset, "all_gather_v");
    offset += counts[i];
  }
  const MPI_Datatype type = mpi_datatype(input.dtype);
  const int mine = counts.empty() ? 0 : sizes[rank()];
  return collective(
      call_of::all_gather_v(output, input, counts),
      [=, in = s.in, out = s.out, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Iallgatherv(in, mine, type, out, sizes, offsets, type, comm, r);
      },
      copy_out(output, s.out), std::move(s.scratch));
}

Work MpiBackend::gather(core::Buf output, core::ConstBuf input, int root) {
  const int n = mpi_count(input.count, "gather");
  const MPI_Datatype type = mpi_datatype(input.dtype);
  const bool at_root = rank() == root;
  Staged s = stage(input, at_root ? output.bytes() : 0);
  return collective(
      call_of::gather(input, root),
      [=, in = s.in, out = s.out, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Igather(in, n, type, at_root ? out : nullptr, n, type, root, comm, r);
      },
      at_root ? copy_out(output, s.out) : Finish{}, std::move(s.scratch));
}

Work MpiBackend::scatter(core::Buf output, core::ConstBuf input, int root) {
  const int n = mpi_count(output.count, "scatter");
  const MPI_Datatype type = mpi_datatype(output.dtype);
  const bool at_root = rank() == root;
  Staged s = stage(at_root ? input : core::ConstBuf{}, output.bytes());
  return collective(
      call_of::scatter(output, root),
      [=, in = s.in, out = s.out, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Iscatter(at_root ? in : nullptr, n, type, out, n, type, root, comm, r);
      },
      copy_out(output, s.out), std::move(s.scratch));
}

Work MpiBackend::reduce_scatter(core::Buf output, core::ConstBuf input, ReduceOp op) {
  const int n = mpi_count(output.count, "reduce_scatter");
  (void)mpi_count(input.count, "reduce_scatter");
  Staged s = stage(input, output.bytes());
  const DType dtype = output.dtype;
  return collective(
      call_of::reduce_scatter(output, op),
      [=, in = s.in, out = s.out, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Ireduce_scatter_block(in, out, n, mpi_datatype(dtype), mpi_op(dtype, op), comm, r);
      },
      copy_out(output, s.out, mean_of(output, op, size())), std::move(s.scratch));
}

Work MpiBackend::all_to_all(core::Buf output, core::ConstBuf input) {
  const int n = mpi_count(input.count / static_cast<std::size_t>(size()), "all_to_all");
  (void)mpi_count(input.count, "all_to_all");
  const MPI_Datatype type = mpi_datatype(input.dtype);
  Staged s = stage(input, output.bytes());
  return collective(
      call_of::all_to_all(input),
      [=, in = s.in, out = s.out, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Ialltoall(in, n, type, out, n, type, comm, r);
      },
      copy_out(output, s.out), std::move(s.scratch));
}

Work MpiBackend::all_to_all_v(core::Buf output, core::ConstBuf input,
                              std::span<const std::size_t> output_counts,
                              std::span<const std::size_t> input_counts) {
  // MPI reads the four count and offset arrays until completion: they are staged too.
  const std::size_t n = input_counts.size();
  Staged s = stage(input, output.bytes(), 4 * n * sizeof(int));
  int* send_counts = reinterpret_cast<int*>(s.head);
  int* send_offsets = send_counts + n;
  int* recv_counts = send_offsets + n;
  int* recv_offsets = recv_counts + n;
  std::size_t in_offset = 0, out_offset = 0;
  for (std::size_t i = 0; i < n; ++i) {
    send_counts[i] = mpi_count(input_counts[i], "all_to_all");
    send_offsets[i] = mpi_count(in_offset, "all_to_all");
    recv_counts[i] = mpi_count(output_counts[i], "all_to_all");
    recv_offsets[i] = mpi_count(out_offset, "all_to_all");
    in_offset += input_counts[i];
    out_offset += output_counts[i];
  }
  const MPI_Datatype type = mpi_datatype(input.dtype);
  // The ranks exchange their splits first (sequence.hpp): a peer that would send more or fewer
  // elements than this rank's split for it expects is a DesyncError on every rank.
  return collective(
      call_of::all_to_all_v(input),
      [=, in = s.in, out = s.out, comm = comm_->handle()](MPI_Request* r) {
    return MPI_Ialltoallv(in, send_counts, send_offsets, type, out, recv_counts, recv_offsets, type,
                          comm, r);
      },
      copy_out(output, s.out), std::move(s.scratch),
      Splits{std::vector<std::uint64_t>(input_counts.begin(), input_counts.end()),
             std::vector<std::uint64_t>(output_counts.begin(), output_counts.end())});
}

Work MpiBackend::barrier() { return collective(call_of::barrier(), {}); }

std::shared_ptr<core::BackendImpl> MpiBackend::split(const std::vector<int>& ranks) {
  const auto it = std::find(ranks.begin(), ranks.end(), rank());
  const bool member = it != ranks.end();
  return split_by_color(member ? 0 : -1, member ? static_cast<int>(it - ranks.begin()) : 0, ranks,
                        false, call_of::split(ranks).lists_hash, core::CallKind::split);
}

// color = the index of this rank's list, key = its position there.
std::shared_ptr<core::BackendImpl> MpiBackend::split_groups(const core::Layout& layout) {
  return split_by_color(layout.color, std::max(layout.position, 0), layout.own(), layout.count > 1,
                        layout.hash, core::CallKind::split_groups);
}

// use_local_synchronization: the members meet in the store first (MPI's call has no deadline),
// then make the communicator among themselves alone (MPI_Comm_create_group, tagged by the list).
std::string MpiBackend::recovery_refusal() const {
  return "the mpi backend cannot abort, shrink or reconfigure a group: Open MPI 4.1 has no ULFM "
         "(fault "
         "tolerant MPI), so a communicator with a lost rank cannot be revoked or shrunk; use "
         "gloo or nccl for a job that must survive a lost rank, or restart the job";
}

std::shared_ptr<core::BackendImpl> MpiBackend::split_local(const std::vector<int>& ranks) {
  const std::string key = core::local_group_key(ranks, local_splits_[ranks]++);
  const MpiGroupSpec& parent = comm_->spec();
  MpiGroupSpec spec;
  spec.store = parent.store;
  spec.prefix = parent.prefix + "/" + key;
  for (const int r : ranks)
    spec.global_ranks.push_back(parent.global_ranks[static_cast<std::size_t>(r)]);
  spec.rank = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank()) - ranks.begin());
  spec.timeout = parent.timeout;
  const std::string group = core::group_text(spec.global_ranks);
  if (spec.store) {
    PrefixStore meeting(spec.prefix, spec.store);
    core::wait_for_members(meeting, spec.global_ranks, spec.rank, spec.timeout, "mpi new_group",
                           group,
                           "with use_local_synchronization every member calls new_group with the "
                           "same list");
  }
  MPI_Comm child = MPI_COMM_NULL;
  {
    auto lock = mpi_lock();
    MPI_Group all = MPI_GROUP_NULL, members = MPI_GROUP_NULL;
    check_mpi(MPI_Comm_group(comm_->handle(), &all), comm_->where("new_group"));
    check_mpi(MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &members),
              comm_->where("new_group"));
    const int tag = static_cast<int>(std::hash<std::string>{}(key) % 32768);
    const int made = MPI_Comm_create_group(comm_->handle(), members, tag, &child);
    MPI_Group_free(&members);
    MPI_Group_free(&all);
    check_mpi(made, comm_->where("new_group (MPI_Comm_create_group) of the " + group));
  }
  spec.comm = child;
  return std::make_shared<MpiBackend>(std::move(spec));
}

// One MPI_Comm_split (MPI_UNDEFINED for color -1).
std::shared_ptr<core::BackendImpl> MpiBackend::split_by_color(int color, int key,
                                                              const std::vector<int>& own,
                                                              bool several, std::uint32_t lists,
                                                              core::CallKind kind) {
  const int index = ++splits_;
  const std::string operation = std::string(core::to_string(kind)) + " #" + std::to_string(index);
  // MPI_Comm_split blocks without a deadline: the ranks first agree on the split, with one, so
  // it starts only once every member has arrived with the same call.
  core::CallDesc call = core::make_call(kind);
  call.lists_hash = lists;
  collective(call, {}).wait();
  if (color < 0) color = MPI_UNDEFINED;
  MPI_Comm child = MPI_COMM_NULL;
  {
    auto lock = mpi_lock();
    check_mpi(MPI_Comm_split(comm_->handle(), color, key, &child), comm_->where(operation));
  }
  if (color == MPI_UNDEFINED) return nullptr;
  MpiGroupSpec spec;
  spec.comm = child;
  spec.store = comm_->spec().store;
  spec.prefix = comm_->spec().prefix + "/group" + std::to_string(index) +
                (several ? "-" + std::to_string(color) : "");
  for (const int r : own)
    spec.global_ranks.push_back(comm_->spec().global_ranks[static_cast<std::size_t>(r)]);
  spec.rank = key;
  spec.timeout = comm_->spec().timeout;
  return std::make_shared<MpiBackend>(std::move(spec));
}

}  // namespace dist::real
