// OperationCounter and roll_call_key (operation.hpp): pure functions, unit-tested without a GPU.
#include "real/nccl/operation.hpp"

namespace dist::real {

Operation OperationCounter::collective(const std::string& kind) {
  ++collectives_;
  return {kind + " #" + std::to_string(collectives_), collectives_, -1};
}

Operation OperationCounter::p2p(const std::string& kind, int group_peer, int world_peer) {
  ++p2p_;
  const char* direction = kind == "send" ? " to group rank " : " from group rank ";
  return {kind + " #" + std::to_string(p2p_) + direction + std::to_string(group_peer), 0,
          world_peer};
}

std::string roll_call_key(const std::string& comm_key, const Operation& op) {
  if (op.collective == 0 || op.peer >= 0) return "";
  return comm_key + "/collective " + std::to_string(op.collective);
}

}  // namespace dist::real
