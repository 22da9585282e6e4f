// MpiBackend's send and recv: one MPI message per send, a header (element count and dtype)
// followed by the payload, staged in memory the Work owns, so a size or dtype mismatch is an
// InvalidArgument on the receiver naming both sides (the sender completes; see docs/backends.md)
// and MPI never touches the caller's buffer once the call has returned or thrown. MPI delivers
// messages between two ranks with the same tag in order, so the n-th send matches the n-th recv.
#include <cstring>

#include "dist/errors.hpp"
#include "real/mpi/backend.hpp"
#include "real/mpi/mapping.hpp"

namespace dist::real {

namespace {

constexpr std::uint32_t header_magic = 0x44495354;  // "DIST"

struct Header {
  std::uint64_t count = 0;
  std::uint32_t dtype = 0;
  std::uint32_t magic = header_magic;
};

std::string describe(const Header& h) {
  return std::to_string(h.count) + " " + std::string(to_string(static_cast<DType>(h.dtype))) +
         " element(s)";
}

// The receiver's check of the message it got in `staged` (status: its size), then the copy out.
void finish_recv(const MpiComm& comm, const MpiOperation& op, const Header& mine,
                 const std::byte* staged, core::Buf data, const MPI_Status& status) {
  int received = 0;
  {
    auto lock = mpi_lock();
    if (MPI_Get_count(&status, MPI_BYTE, &received) != MPI_SUCCESS) received = 0;
  }
  Header theirs;
  const bool has_header = received >= static_cast<int>(sizeof(Header));
  if (has_header) std::memcpy(&theirs, staged, sizeof(Header));
  const bool truncated = status.MPI_ERROR == MPI_ERR_TRUNCATE;
  const int me = comm.spec().global_ranks[static_cast<std::size_t>(comm.spec().rank)];
  if (!has_header || theirs.magic != header_magic)
    throw BackendError(comm.where(op.name()) + ": the message from rank " +
                       std::to_string(op.peer) + " is not a dist message (" +
                       std::to_string(received) + " bytes without dist's header)" +
                       (truncated ? ", larger than expected" : ""));
  if (truncated || theirs.count != mine.count || theirs.dtype != mine.dtype)
    throw InvalidArgument(comm.where(op.name()) + ": the sender (rank " + std::to_string(op.peer) +
                          ") sends " + describe(theirs) + ", the receiver (rank " +
                          std::to_string(me) + ") expects " + describe(mine) +
                          "; the receive buffer was left unchanged");
  if (data.count) std::memcpy(data.data, staged + sizeof(Header), data.bytes());
}

}  // namespace

Work MpiBackend::p2p(core::Buf data, int peer, int tag, bool is_send) {
  MpiOperation operation{.kind = is_send ? "send to" : "recv from",
                         .peer = comm_->spec().global_ranks[static_cast<std::size_t>(peer)],
                         .tag = tag,
                         .deadline = {},
                         .finish = {},
                         .scratch = {}};
  if (tag > tag_limit_)
    throw InvalidArgument(comm_->where(operation.name()) + ": tag " + std::to_string(tag) +
                          " is above this MPI's largest tag, MPI_TAG_UB = " + std::to_string(tag_limit_));
  if (!comm_->usable()) comm_->throw_unusable(operation.name());
  const Header mine{.count = data.count, .dtype = static_cast<std::uint32_t>(data.dtype)};
  operation.scratch.resize(sizeof(Header) + data.bytes());
  const int n = mpi_count(operation.scratch.size(), operation.kind);  // bytes, header included
  std::byte* staged = operation.scratch.data();  // stays put when the vector moves
  if (is_send) {
    std::memcpy(staged, &mine, sizeof(Header));
    if (data.count) std::memcpy(staged + sizeof(Header), data.data, data.bytes());
  } else {
    MpiOperation named;  // what an error names
    named.kind = operation.kind;
    named.peer = operation.peer;
    named.tag = tag;
    operation.finish = [comm = comm_.get(), named = std::move(named), mine, staged,
                        data](const MPI_Status& status) {
      finish_recv(*comm, named, mine, staged, data, status);
    };
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_SUCCESS;
  {
    auto lock = mpi_lock();
    code = is_send ? MPI_Isend(staged, n, MPI_BYTE, peer, tag, comm_->handle(), &request)
                   : MPI_Irecv(staged, n, MPI_BYTE, peer, tag, comm_->handle(), &request);
  }
  if (code != MPI_SUCCESS) throw_mpi_error(code, comm_->where(operation.name()));
  return Work(std::make_shared<MpiWork>(comm_, request, std::move(operation)));
}

Work MpiBackend::send(core::Buf data, int dst, int tag) { return p2p(data, dst, tag, true); }

Work MpiBackend::recv(core::Buf data, int src, int tag) { return p2p(data, src, tag, false); }

}  // namespace dist::real
