// The mpi backend: core::BackendImpl over MPI, one object per rank per group, each group its own
// communicator (MPI_Comm_split of its parent). Every operation is MPI's non-blocking form
// (MPI_Iallreduce, MPI_Isend, ...) behind a Work that polls it against the group's timeout, so
// no call blocks past its deadline; reductions are dist's own MPI_Ops (mapping.hpp). Every
// collective is agreed by the ranks before its data moves (sequence.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
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
  Work all_gather(core::Buf output, core::ConstBuf input) override;
  Work send(core::ConstBuf data, int dst, int tag) override;
  Work recv(core::Buf data, int src, int tag) override;
  bool receives_from_any_source() const override { return true; }
  std::shared_ptr<core::BackendImpl> split_groups(const core::Layout& layout) override;
  Work barrier() override;
  std::shared_ptr<core::BackendImpl> split(const std::vector<int>& ranks) override;
  std::shared_ptr<core::BackendImpl> split_local(const std::vector<int>& ranks) override;
  // Open MPI 4.1 has no ULFM: a communicator with a dead rank cannot be revoked or shrunk.
  std::string recovery_refusal() const override;

  Work reduce(core::Buf data, ReduceOp op, int root) override;
  Work gather(core::Buf output, core::ConstBuf input, int root) override;
  Work scatter(core::Buf output, core::ConstBuf input, int root) override;
  Work reduce_scatter(core::Buf output, core::ConstBuf input, ReduceOp op) override;
  Work all_to_all(core::Buf output, core::ConstBuf input) override;
  Work all_gather_v(core::Buf output, core::ConstBuf input,
                    std::span<const std::size_t> counts) override;
  Work all_to_all_v(core::Buf output, core::ConstBuf input,
                    std::span<const std::size_t> output_counts,
                    std::span<const std::size_t> input_counts) override;

 private:
  // The data call of a collective, made under the MPI lock once the ranks agreed on it.
  using Post = std::function<int(MPI_Request*)>;
  // An uneven all_to_all's splits (per group rank): what this rank sends each, expects from each.
  struct Splits {
    std::vector<std::uint64_t> sends, expects;
  };
  // Starts a collective in the group's sequence (sequence.hpp): `post` (none: a barrier or a
  // split) once every rank agreed on `call`, then `finish` on completion, on the waiting thread,
  // with `scratch` kept alive until then.
  Work collective(const core::CallDesc& call, Post post, Finish finish = {}, Scratch scratch = {},
                  Splits splits = {});
  // A send of `data` (`into` empty), or a receive into `into` (`data` the same buffer).
  Work p2p(core::ConstBuf data, core::Buf into, int peer, int tag, bool is_send);
  // split and split_groups: one MPI_Comm_split by `color` (-1: in no group) and `key`; `own` is
  // this rank's list, the color is named in the store prefix when `several` groups are made;
  // `lists` is the hash every rank agrees on first; `kind` is split or split_groups.
  std::shared_ptr<core::BackendImpl> split_by_color(int color, int key, const std::vector<int>& own,
                                                    bool several, std::uint32_t lists,
                                                    core::CallKind kind);

  std::shared_ptr<MpiComm> comm_;
  int splits_ = 0;
  std::map<std::vector<int>, int> local_splits_;  // split_local's groups so far, per list
  int tag_limit_ = 32767;  // MPI_TAG_UB
};

}  // namespace dist::real
