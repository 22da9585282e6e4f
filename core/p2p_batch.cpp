// batch_isend_irecv: checks every operation, then posts them all (each through the same path as
// isend/irecv, so each Work is in the rank's ledger and an isend's buffer is checksummed).
#include <string>

#include "core/validate.hpp"
#include "dist/errors.hpp"
#include "dist/p2p.hpp"

namespace dist {

std::vector<Work> batch_isend_irecv(const std::vector<P2POp>& ops) {
  std::vector<core::Target> targets;
  targets.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const P2POp& op = ops[i];
    const bool send = op.kind == P2POp::Kind::isend;
    const std::string function =
        "batch_isend_irecv: ops[" + std::to_string(i) + "] (" + (send ? "isend" : "irecv") + ")";
    targets.push_back(
        core::check_p2p(op.data, op.peer, op.tag, op.group, function.c_str(), "peer", !send));
    if (targets.back().group != targets.front().group)
      throw InvalidArgument(function +
                            " is on another group than ops[0]: the operations of a batch share "
                            "one group (as torch's batch_isend_irecv requires)");
  }
  std::vector<Work> works;
  works.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const P2POp& op = ops[i];
    core::BackendImpl& backend = *targets[i].backend;
    if (op.kind == P2POp::Kind::isend)
      works.push_back(detail::issued_send(backend.send(op.data, op.peer, op.tag), op.data));
    else works.push_back(detail::issued(core::post_recv(backend, op.data, op.peer, op.tag)));
  }
  return works;
}

}  // namespace dist
