// MpiBackend's send and recv: MPI_Isend/MPI_Irecv on the group's communicator with the caller's
// tag. MPI delivers messages between two ranks with the same tag in order, so the n-th send
// matches the n-th recv. The Work waits with the group's timeout from wait(), as gloo's does.
#include "dist/errors.hpp"
#include "real/mpi/backend.hpp"
#include "real/mpi/mapping.hpp"

namespace dist::real {

Work MpiBackend::p2p(core::Buf data, int peer, int tag, bool is_send) {
  const int world_peer = comm_->spec().global_ranks[static_cast<std::size_t>(peer)];
  const std::string operation = std::string(is_send ? "send to" : "recv from") + " rank " +
                                std::to_string(world_peer) + " (tag " + std::to_string(tag) + ")";
  if (tag > tag_limit_)
    throw InvalidArgument(comm_->where(operation) + ": tag " + std::to_string(tag) +
                          " is above this MPI's largest tag, MPI_TAG_UB = " + std::to_string(tag_limit_));
  comm_->check_usable(operation);
  const int n = mpi_count(data.count, operation);
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = mpi_lock();
    const MPI_Datatype type = mpi_datatype(data.dtype);
    check_mpi(is_send ? MPI_Isend(data.data, n, type, peer, tag, comm_->handle(), &request)
                      : MPI_Irecv(data.data, n, type, peer, tag, comm_->handle(), &request),
              comm_->where(operation));
  }
  return Work(std::make_shared<MpiWork>(comm_, request, MpiOperation{operation, world_peer, {}, {}, {}}));
}

Work MpiBackend::send(core::Buf data, int dst, int tag) { return p2p(data, dst, tag, true); }

Work MpiBackend::recv(core::Buf data, int src, int tag) { return p2p(data, src, tag, false); }

}  // namespace dist::real
