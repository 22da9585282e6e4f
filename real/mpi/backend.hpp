// The mpi backend: core::BackendImpl over MPI, one object per rank per group, each group its own
// communicator (MPI_Comm_split of its parent). Every operation is MPI's non-blocking form
// (MPI_Iallreduce, MPI_Isend, ...) behind a Work that polls it against the group's timeout, so
// no call blocks past its deadline; reductions are dist's own MPI_Ops (mapping.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend_impl.hpp"
#include "core/calls/call.hpp"
#include "real/mpi/communicator.hpp"
#include "real/mpi/work.hpp"

namespace dist::real {

class MpiBackend final : public core::BackendImpl {
 public:
  explicit MpiBackend(MpiGroupSpec spec);

  dist::Backend kind() const override { return dist::Backend::mpi; }
  int rank() const override { return comm_->spec().rank; }
  int size() const override { return comm_->size(); }

  Work all_reduce(core::Buf data, ReduceOp op) override;
  Work broadcast(core::Buf data, int root) override;
  Work all_gather(core::Buf input, core::Buf output) override;
  Work send(core::Buf data, int dst, int tag) override;
  Work recv(core::Buf data, int src, int tag) override;
  bool receives_from_any_source() const override { return true; }
  std::shared_ptr<core::BackendImpl> split_groups(const core::Layout& layout) override;
  Work barrier() override;
  std::shared_ptr<core::BackendImpl> split(const std::vector<int>& ranks) override;

  Work reduce(core::Buf data, ReduceOp op, int root) override;
  Work gather(core::Buf input, core::Buf output, int root) override;
  Work scatter(core::Buf input, core::Buf output, int root) override;
  Work reduce_scatter(core::Buf input, core::Buf output, ReduceOp op) override;
  Work all_to_all(core::Buf input, core::Buf output) override;
  Work all_gather_v(core::Buf input, core::Buf output,
                    std::span<const std::size_t> counts) override;
  Work all_to_all_v(core::Buf input, core::Buf output, std::span<const std::size_t> input_counts,
                    std::span<const std::size_t> output_counts) override;

 private:
  // Starts collective #n: checks the group, then `post(request)` issues the MPI call under the
  // lock. `finish` runs on completion (with `scratch` kept alive until then).
  template <class Post>
  Work collective(core::CallKind kind, Post&& post, Finish finish = {}, Scratch scratch = {});
  // Waits for a request of our own (not behind a Work), giving it up with `scratch` on a timeout.
  void await(MPI_Request& request, Clock::time_point deadline, const std::string& operation,
             Scratch& scratch);
  Work p2p(core::Buf data, int peer, int tag, bool is_send);
  // split and split_groups: one MPI_Comm_split by `color` (-1: in no group) and `key`; `own` is
  // this rank's list, the color is named in the store prefix when `several` groups are made;
  // `what` names the call in errors.
  std::shared_ptr<core::BackendImpl> split_by_color(int color, int key, const std::vector<int>& own,
                                                    bool several, const char* what);

  std::shared_ptr<MpiComm> comm_;
  int splits_ = 0;
  int tag_limit_ = 32767;  // MPI_TAG_UB
};

}  // namespace dist::real
