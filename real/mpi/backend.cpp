// MpiBackend's collectives and groups: each collective posts MPI's non-blocking call and returns
// its Work. MPI forbids overlapping send and receive buffers, so an input that overlaps the
// output is copied aside first (or passed as MPI_IN_PLACE where it is exactly this rank's part).
#include "real/mpi/backend.hpp"

#include <algorithm>
#include <cstring>

#include "core/group_text.hpp"
#include "core/host_reduce.hpp"
#include "real/mpi/mapping.hpp"

namespace dist::real {

using core::Fingerprint;
using core::fingerprint;

namespace {

const std::byte* bytes_of(const core::Buf& b) { return static_cast<const std::byte*>(b.data); }

bool overlaps(const core::Buf& a, const core::Buf& b) {
  return a.bytes() > 0 && b.bytes() > 0 && bytes_of(a) < bytes_of(b) + b.bytes() &&
         bytes_of(b) < bytes_of(a) + a.bytes();
}

// The input to hand MPI: `input` itself, or a copy in `scratch` when it overlaps `output`.
const void* apart_from(const core::Buf& input, const core::Buf& output, std::vector<std::byte>& scratch) {
  if (!overlaps(input, output)) return input.data;
  scratch.assign(bytes_of(input), bytes_of(input) + input.bytes());
  return scratch.data();
}

// Whether `input` is exactly part `index` of `output` (parts of input.bytes() each).
bool is_part(const core::Buf& input, const core::Buf& output, int index) {
  return input.bytes() > 0 &&
         bytes_of(input) == bytes_of(output) + static_cast<std::size_t>(index) * input.bytes();
}

}  // namespace

MpiBackend::MpiBackend(MpiGroupSpec spec)
    : comm_(std::make_shared<MpiComm>(std::move(spec))), check_calls_(core::fingerprints_enabled()) {
  auto lock = mpi_lock();
  int* upper = nullptr;
  int found = 0;
  if (MPI_Comm_get_attr(comm_->handle(), MPI_TAG_UB, &upper, &found) == MPI_SUCCESS && found && upper)
    tag_limit_ = *upper;
}

void MpiBackend::await(MPI_Request& request, Clock::time_point deadline, const std::string& operation,
                       std::vector<std::byte>& scratch) {
  try {
    comm_->wait(request, deadline, operation);
  } catch (...) {
    abandon(request, std::move(scratch));
    request = MPI_REQUEST_NULL;
    throw;
  }
}

void MpiBackend::check_same_call(const Fingerprint& mine, const std::string& operation,
                                 Clock::time_point deadline) {
  // Every rank's fingerprint, then this rank's own: MPI may still read and write both after a
  // timeout, so both live in the scratch that goes with the request.
  const std::size_t bytes = sizeof(Fingerprint) * static_cast<std::size_t>(size());
  std::vector<std::byte> all(bytes + sizeof(Fingerprint));
  std::memcpy(all.data() + bytes, &mine, sizeof(Fingerprint));
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = mpi_lock();
    check_mpi(MPI_Iallgather(all.data() + bytes, sizeof(Fingerprint), MPI_BYTE, all.data(),
                             sizeof(Fingerprint), MPI_BYTE, comm_->handle(), &request),
              comm_->where(operation) + " (checking that every rank makes the same call)");
  }
  await(request, deadline, operation, all);
  std::vector<Fingerprint> calls(static_cast<std::size_t>(size()));
  std::memcpy(calls.data(), all.data(), bytes);
  core::check_fingerprints(calls, comm_->spec().global_ranks,
                           "collective #" + std::to_string(sequence_) + " on the " +
                               core::group_text(comm_->spec().global_ranks));
}

template <class Post>
Work MpiBackend::collective(const Fingerprint& call, Post&& post, std::function<void()> finish,
                            std::vector<std::byte> scratch) {
  MpiOperation operation{.kind = core::kind_name(call),
                         .sequence = ++sequence_,
                         .deadline = Clock::now() + comm_->spec().timeout,
                         .finish = std::move(finish),
                         .scratch = std::move(scratch)};
  if (!comm_->usable()) comm_->throw_unusable(operation.name());
  if (check_calls_) check_same_call(call, operation.name(), *operation.deadline);
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_SUCCESS;
  {
    auto lock = mpi_lock();
    code = post(&request);
  }
  if (code != MPI_SUCCESS) throw_mpi_error(code, comm_->where(operation.name()));
  return Work(std::make_shared<MpiWork>(comm_, request, std::move(operation)));
}

Work MpiBackend::all_reduce(core::Buf data, ReduceOp op) {
  const auto call = fingerprint("all_reduce", data.dtype, data.count, -1, op);
  const int n = mpi_count(data.count, "all_reduce");
  std::function<void()> finish;
  if (op == ReduceOp::mean)
    finish = [data, world = size()] {
      core::finish_mean(data.data, data.count, data.dtype, world);
    };
  return collective(call, [&](MPI_Request* r) {
    return MPI_Iallreduce(MPI_IN_PLACE, data.data, n, mpi_datatype(data.dtype), mpi_op(data.dtype, op),
                          comm_->handle(), r);
  }, std::move(finish));
}

Work MpiBackend::broadcast(core::Buf data, int root) {
  const int n = mpi_count(data.count, "broadcast");
  return collective(fingerprint("broadcast", data.dtype, data.count, root), [&](MPI_Request* r) {
    return MPI_Ibcast(data.data, n, mpi_datatype(data.dtype), root, comm_->handle(), r);
  });
}

Work MpiBackend::reduce(core::Buf data, ReduceOp op, int root) {
  const int n = mpi_count(data.count, "reduce");
  const bool at_root = rank() == root;
  std::function<void()> finish;
  if (op == ReduceOp::mean && at_root)
    finish = [data, world = size()] {
      core::finish_mean(data.data, data.count, data.dtype, world);
    };
  return collective(fingerprint("reduce", data.dtype, data.count, root, op), [&](MPI_Request* r) {
    return MPI_Ireduce(at_root ? MPI_IN_PLACE : data.data, at_root ? data.data : nullptr, n,
                       mpi_datatype(data.dtype), mpi_op(data.dtype, op), root, comm_->handle(), r);
  }, std::move(finish));
}

Work MpiBackend::all_gather(core::Buf input, core::Buf output) {
  const int n = mpi_count(input.count, "all_gather");
  const MPI_Datatype type = mpi_datatype(input.dtype);
  std::vector<std::byte> scratch;
  const void* send = is_part(input, output, rank()) ? MPI_IN_PLACE : apart_from(input, output, scratch);
  return collective(fingerprint("all_gather", input.dtype, input.count), [&](MPI_Request* r) {
    return MPI_Iallgather(send, n, type, output.data, n, type, comm_->handle(), r);
  }, {}, std::move(scratch));
}

Work MpiBackend::all_gather_v(core::Buf input, core::Buf output, std::span<const std::size_t> counts) {
  std::vector<int> sizes;
  std::vector<int> offsets;
  std::size_t offset = 0;
  for (const std::size_t c : counts) {
    sizes.push_back(mpi_count(c, "all_gather_v"));
    offsets.push_back(mpi_count(offset, "all_gather_v"));
    offset += c;
  }
  const MPI_Datatype type = mpi_datatype(input.dtype);
  std::vector<std::byte> scratch;
  const void* send = apart_from(input, output, scratch);
  // MPI reads the count and offset arrays until completion: they travel in the scratch too.
  const std::size_t head = scratch.size();
  scratch.resize(head + 2 * sizes.size() * sizeof(int));
  auto* arrays = reinterpret_cast<int*>(scratch.data() + head);
  if (!sizes.empty()) {
    std::memcpy(arrays, sizes.data(), sizes.size() * sizeof(int));
    std::memcpy(arrays + sizes.size(), offsets.data(), offsets.size() * sizeof(int));
  }
  if (head > 0) send = scratch.data();  // resize may have moved the copy
  const int mine = sizes.empty() ? 0 : sizes[static_cast<std::size_t>(rank())];
  return collective(fingerprint("all_gather_v", input.dtype, output.count), [&](MPI_Request* r) {
    return MPI_Iallgatherv(send, mine, type, output.data, arrays, arrays + sizes.size(), type,
                           comm_->handle(), r);
  }, {}, std::move(scratch));
}

Work MpiBackend::gather(core::Buf input, core::Buf output, int root) {
  const int n = mpi_count(input.count, "gather");
  const MPI_Datatype type = mpi_datatype(input.dtype);
  const bool at_root = rank() == root;
  std::vector<std::byte> scratch;
  const void* send = input.data;
  if (at_root) send = is_part(input, output, root) ? MPI_IN_PLACE : apart_from(input, output, scratch);
  return collective(fingerprint("gather", input.dtype, input.count, root), [&](MPI_Request* r) {
    return MPI_Igather(send, n, type, at_root ? output.data : nullptr, n, type, root,
                       comm_->handle(), r);
  }, {}, std::move(scratch));
}

Work MpiBackend::scatter(core::Buf input, core::Buf output, int root) {
  const int n = mpi_count(output.count, "scatter");
  const MPI_Datatype type = mpi_datatype(output.dtype);
  const bool at_root = rank() == root;
  std::vector<std::byte> scratch;
  const void* send = at_root ? input.data : nullptr;
  void* receive = output.data;
  if (at_root && is_part(output, input, root)) receive = MPI_IN_PLACE;
  else if (at_root) send = apart_from(input, output, scratch);
  return collective(fingerprint("scatter", output.dtype, output.count, root), [&](MPI_Request* r) {
    return MPI_Iscatter(send, n, type, receive, n, type, root, comm_->handle(), r);
  }, {}, std::move(scratch));
}

Work MpiBackend::reduce_scatter(core::Buf input, core::Buf output, ReduceOp op) {
  const int n = mpi_count(output.count, "reduce_scatter");
  (void)mpi_count(input.count, "reduce_scatter");
  std::vector<std::byte> scratch;
  const void* send = apart_from(input, output, scratch);
  std::function<void()> finish;
  if (op == ReduceOp::mean)
    finish = [output, world = size()] {
      core::finish_mean(output.data, output.count, output.dtype, world);
    };
  return collective(fingerprint("reduce_scatter", output.dtype, output.count, -1, op), [&](MPI_Request* r) {
    return MPI_Ireduce_scatter_block(send, output.data, n, mpi_datatype(output.dtype),
                                     mpi_op(output.dtype, op), comm_->handle(), r);
  }, std::move(finish), std::move(scratch));
}

Work MpiBackend::all_to_all(core::Buf input, core::Buf output) {
  const int n = mpi_count(input.count / static_cast<std::size_t>(size()), "all_to_all");
  (void)mpi_count(input.count, "all_to_all");
  const MPI_Datatype type = mpi_datatype(input.dtype);
  std::vector<std::byte> scratch;
  const void* send = apart_from(input, output, scratch);
  return collective(fingerprint("all_to_all", input.dtype, input.count), [&](MPI_Request* r) {
    return MPI_Ialltoall(send, n, type, output.data, n, type, comm_->handle(), r);
  }, {}, std::move(scratch));
}

Work MpiBackend::barrier() {
  return collective(fingerprint("barrier"), [&](MPI_Request* r) { return MPI_Ibarrier(comm_->handle(), r); });
}

std::shared_ptr<core::BackendImpl> MpiBackend::split(const std::vector<int>& ranks) {
  const int index = ++splits_;
  const std::string operation = "new_group #" + std::to_string(index);
  comm_->check_usable(operation);
  // MPI_Comm_split blocks without a deadline: a barrier with one first, so it starts only once
  // every member has arrived.
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = mpi_lock();
    check_mpi(MPI_Ibarrier(comm_->handle(), &request), comm_->where(operation));
  }
  std::vector<std::byte> none;
  await(request, Clock::now() + comm_->spec().timeout, operation, none);
  const auto it = std::find(ranks.begin(), ranks.end(), rank());
  const int position = it == ranks.end() ? 0 : static_cast<int>(it - ranks.begin());
  MPI_Comm child = MPI_COMM_NULL;
  {
    auto lock = mpi_lock();
    check_mpi(MPI_Comm_split(comm_->handle(), it == ranks.end() ? MPI_UNDEFINED : 0, position, &child),
              comm_->where(operation));
  }
  if (it == ranks.end()) return nullptr;
  MpiGroupSpec spec;
  spec.comm = child;
  spec.store = comm_->spec().store;
  spec.prefix = comm_->spec().prefix + "/group" + std::to_string(index);
  for (const int r : ranks) spec.global_ranks.push_back(comm_->spec().global_ranks[static_cast<std::size_t>(r)]);
  spec.rank = position;
  spec.timeout = comm_->spec().timeout;
  return std::make_shared<MpiBackend>(std::move(spec));
}

}  // namespace dist::real
