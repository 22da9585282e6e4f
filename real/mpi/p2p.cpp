// MpiBackend's send and recv: MPI_Isend/MPI_Irecv on the group's communicator with the caller's
// tag. MPI delivers messages between two ranks with the same tag in order, so the n-th send
// matches the n-th recv. The Work waits with the group's timeout from wait(), as gloo's does.
#include "dist/errors.hpp"
#include "real/mpi/backend.hpp"
#include "real/mpi/mapping.hpp"

namespace dist::real {

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
  const int n = mpi_count(data.count, operation.kind);
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_SUCCESS;
  {
    auto lock = mpi_lock();
    const MPI_Datatype type = mpi_datatype(data.dtype);
    code = is_send ? MPI_Isend(data.data, n, type, peer, tag, comm_->handle(), &request)
                   : MPI_Irecv(data.data, n, type, peer, tag, comm_->handle(), &request);
  }
  if (code != MPI_SUCCESS) throw_mpi_error(code, comm_->where(operation.name()));
  return Work(std::make_shared<MpiWork>(comm_, request, std::move(operation)));
}

Work MpiBackend::send(core::Buf data, int dst, int tag) { return p2p(data, dst, tag, true); }

Work MpiBackend::recv(core::Buf data, int src, int tag) { return p2p(data, src, tag, false); }

}  // namespace dist::real
