// MpiBackend's send and recv: one MPI message per send, a core::P2PHeader (element count and
// dtype) followed by the payload, staged in memory the Work owns; and for each recv, an
// acknowledgement carrying the receiver's header back to the sender on the group's duplicate
// communicator (MpiComm::acks) with the same tag. A send's Work completes once its message went and
// the acknowledgement came, a recv's once its message came and the acknowledgement went, so a size
// or dtype mismatch is an InvalidArgument on both ranks naming both sides, worded as on gloo
// (core::throw_p2p_mismatch), and MPI never touches the caller's buffer once the call has returned
// or thrown. MPI delivers messages between two ranks with the same tag and communicator in order,
// so the n-th send matches the n-th recv, and the n-th acknowledgement the n-th send. Posting
// never blocks; a send's wait() lasts until the receiver has posted its recv.
#include <algorithm>
#include <cstring>

#include "core/p2p_header.hpp"
#include "dist/errors.hpp"
#include "real/mpi/backend.hpp"
#include "real/mpi/mapping.hpp"

namespace dist::real {

namespace {

using core::P2PHeader;
constexpr std::size_t header_size = P2PHeader::wire_size;

int world_rank(const MpiComm& comm) {
  return comm.spec().global_ranks[static_cast<std::size_t>(comm.spec().rank)];
}

// The sender's check of the acknowledgement in `ack`: what the receiver expects.
void finish_send(const MpiComm& comm, const MpiOperation& op, const P2PHeader& mine,
                 const std::byte* ack) {
  const auto theirs = P2PHeader::decode({ack, header_size});
  if (!theirs)
    throw BackendError(comm.where(op.name()) + ": the acknowledgement from rank " +
                       std::to_string(op.peer) + " lacks dist's header");
  if (*theirs != mine)
    core::throw_p2p_mismatch(comm.where(op.name()), world_rank(comm), mine, op.peer, *theirs);
}

// An any_source receiver's acknowledgement, sent once the message came and named its sender
// (who posted the receive of it with the send, so it completes at once).
void send_late_ack(MpiComm& comm, const MpiOperation& op, const std::byte* ack, int src, int tag) {
  Scratch bytes(header_size);  // MPI's until the send completes
  std::memcpy(bytes.data(), ack, header_size);
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_SUCCESS;
  {
    auto lock = mpi_lock();
    code = MPI_Isend(bytes.data(), static_cast<int>(header_size), MPI_BYTE, src, tag, comm.acks(),
                     &request);
  }
  if (code != MPI_SUCCESS) throw_mpi_error(code, comm.where(op.name()));
  if (!poll_until(request, Clock::now() + comm.spec().timeout)) {
    abandon(request, std::move(bytes));
    comm.timed_out(op.name(), op.peer);
  }
}

// The receiver's check of the message it got in `staged` (status: its size), then the copy out.
void finish_recv(const MpiComm& comm, const MpiOperation& op, const P2PHeader& mine,
                 const std::byte* staged, core::Buf data, const MPI_Status& status) {
  int received = 0;
  {
    auto lock = mpi_lock();
    if (MPI_Get_count(&status, MPI_BYTE, &received) != MPI_SUCCESS) received = 0;
  }
  const bool truncated = status.MPI_ERROR == MPI_ERR_TRUNCATE;
  const auto theirs = P2PHeader::decode({staged, static_cast<std::size_t>(std::max(received, 0))});
  if (!theirs)
    throw BackendError(comm.where(op.name()) + ": the message from rank " +
                       std::to_string(op.peer) + " is not a dist message (" +
                       std::to_string(received) + " bytes without dist's header)" +
                       (truncated ? ", larger than expected" : ""));
  if (truncated || *theirs != mine)
    core::throw_p2p_mismatch(comm.where(op.name()), op.peer, *theirs, world_rank(comm), mine);
  if (data.count) std::memcpy(data.data, staged + header_size, data.bytes());
}

}  // namespace

Work MpiBackend::p2p(core::ConstBuf data, core::Buf into, int peer, int tag, bool is_send) {
  const bool any = !is_send && peer == any_source;
  MpiOperation operation{
      .kind = is_send ? "send to" : "recv from",
      .peer = any ? -1 : comm_->spec().global_ranks[static_cast<std::size_t>(peer)],
      .tag = tag,
      .receive = !is_send,
      .deadline = {},
      .finish = {},
      .scratch = {}};
  if (tag > tag_limit_)
    throw InvalidArgument(
        comm_->where(operation.name()) + ": tag " + std::to_string(tag) +
        " is above this MPI's largest tag, MPI_TAG_UB = " + std::to_string(tag_limit_));
  if (!comm_->usable()) comm_->throw_unusable(operation.name());
  const P2PHeader mine{.count = data.count, .dtype = data.dtype};
  // The acknowledgement, then the message: header and payload.
  operation.scratch = Scratch(header_size + header_size + data.bytes());
  const int n = mpi_count(operation.scratch.size() - header_size, operation.kind);  // bytes
  std::byte* ack = operation.scratch.data();  // stays put when the scratch moves
  std::byte* staged = ack + header_size;
  MpiOperation named;  // what an error names
  named.kind = operation.kind;
  named.peer = operation.peer;
  named.tag = tag;
  if (is_send) {
    mine.encode(staged);
    if (data.count) std::memcpy(staged + header_size, data.data, data.bytes());
    operation.finish = [comm = comm_.get(), named = std::move(named), mine,
                        ack](const MPI_Status&) { finish_send(*comm, named, mine, ack); };
  } else if (any) {
    mine.encode(ack);
    operation.finish = [comm = comm_.get(), named = std::move(named), mine, ack, staged, into,
                        tag](const MPI_Status& status) mutable {
      named.peer = comm->spec().global_ranks[static_cast<std::size_t>(status.MPI_SOURCE)];
      send_late_ack(*comm, named, ack, status.MPI_SOURCE, tag);
      finish_recv(*comm, named, mine, staged, into, status);
    };
  } else {
    mine.encode(ack);
    operation.finish = [comm = comm_.get(), named = std::move(named), mine, staged,
                        into](const MPI_Status& status) {
      finish_recv(*comm, named, mine, staged, into, status);
    };
  }
  // [0]: the message (its status: a receive's size); [1]: the acknowledgement.
  Requests requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int code = MPI_SUCCESS;
  {
    auto lock = mpi_lock();
    code = is_send ? MPI_Isend(staged, n, MPI_BYTE, peer, tag, comm_->handle(), &requests[0])
                   : MPI_Irecv(staged, n, MPI_BYTE, any ? MPI_ANY_SOURCE : peer, tag,
                               comm_->handle(), &requests[0]);
    if (code == MPI_SUCCESS && !any) {  // an any_source recv acknowledges in finish
      constexpr int h = static_cast<int>(header_size);
      code = is_send ? MPI_Irecv(ack, h, MPI_BYTE, peer, tag, comm_->acks(), &requests[1])
                     : MPI_Isend(ack, h, MPI_BYTE, peer, tag, comm_->acks(), &requests[1]);
    }
  }
  if (code != MPI_SUCCESS) {
    abandon(requests, std::move(operation.scratch));  // the message, if it was posted
    throw_mpi_error(code, comm_->where(operation.name()));
  }
  return Work(std::make_shared<MpiWork>(comm_, requests, std::move(operation)));
}

Work MpiBackend::send(core::ConstBuf data, int dst, int tag) {
  return p2p(data, {}, dst, tag, true);
}

Work MpiBackend::recv(core::Buf data, int src, int tag) { return p2p(data, data, src, tag, false); }

}  // namespace dist::real
