// batch_isend_irecv: checks every operation, then posts them all (each through the same path as
// isend/irecv, so each Work is in the rank's ledger and an isend's buffer is checksummed). An
// operation whose peer is the caller itself, which torch allows in a batch, never reaches the
// backend: the batch's n-th isend to itself with a tag is copied into its n-th irecv from itself
// with that tag, and both complete at once.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "core/device_memory.hpp"
#include "core/validate.hpp"
#include "dist/errors.hpp"
#include "dist/p2p.hpp"

namespace dist {

namespace {

std::string op_text(const std::vector<P2POp>& ops, std::size_t i) {
  return "ops[" + std::to_string(i) + "] (" +
         (ops[i].kind == P2POp::Kind::isend ? "isend" : "irecv") + ")";
}

// Copies each self-isend of the batch (indices in `self`) into its self-irecv; InvalidArgument
// for one without a partner or of another size or dtype, before anything is copied.
void match_self(const std::vector<P2POp>& ops, const std::vector<std::size_t>& self) {
  std::map<int, std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> by_tag;
  for (const std::size_t i : self) {
    auto& [sends, recvs] = by_tag[ops[i].tag];
    (ops[i].kind == P2POp::Kind::isend ? sends : recvs).push_back(i);
  }
  for (const auto& [tag, pair] : by_tag) {
    const auto& [sends, recvs] = pair;
    for (std::size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
      if (k >= sends.size() || k >= recvs.size()) {
        const std::size_t i = k < sends.size() ? sends[k] : recvs[k];
        throw InvalidArgument("batch_isend_irecv: " + op_text(ops, i) +
                              " is to the caller itself with tag " + std::to_string(tag) +
                              ", and the batch has no " + (k < sends.size() ? "irecv" : "isend") +
                              " to match it (a rank's messages to itself match within one batch)");
      }
      const auto& s = ops[sends[k]].sent;
      const auto& r = ops[recvs[k]].received;
      if (s.count != r.count || s.dtype != r.dtype)
        throw InvalidArgument("batch_isend_irecv: " + op_text(ops, sends[k]) + " sends itself " +
                              std::to_string(s.count) + " " + std::string(to_string(s.dtype)) +
                              " element(s), " + op_text(ops, recvs[k]) + " expects " +
                              std::to_string(r.count) + " " + std::string(to_string(r.dtype)));
    }
  }
  for (const auto& [tag, pair] : by_tag) {
    for (std::size_t k = 0; k < pair.first.size(); ++k) {
      const auto& s = ops[pair.first[k]].sent;
      const auto& r = ops[pair.second[k]].received;
      if (s.bytes() == 0) continue;
      if (s.device.is_cpu() && r.device.is_cpu()) {
        std::memmove(r.data, s.data, s.bytes());
      } else if (auto* memory = core::device_memory()) {
        memory->copy(r.data, r.device, s.data, s.device, s.bytes());
      } else {
        throw InvalidArgument("batch_isend_irecv: " + op_text(ops, pair.first[k]) +
                              " copies to the caller itself on a cuda device, which this build "
                              "cannot reach");
      }
    }
  }
}

}  // namespace

std::vector<Work> batch_isend_irecv(const std::vector<P2POp>& ops) {
  std::vector<core::ResolvedGroup> targets;
  std::vector<std::size_t> self;
  targets.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const P2POp& op = ops[i];
    const bool send = op.kind == P2POp::Kind::isend;
    const std::string function = "batch_isend_irecv: " + op_text(ops, i);
    targets.push_back(core::check_p2p(op.data(), op.peer, op.tag, op.group, function.c_str(),
                                      "peer", !send, true));
    if (targets.back().group != targets.front().group)
      throw InvalidArgument(function +
                            " is on another group than ops[0]: the operations of a batch share "
                            "one group (as torch's batch_isend_irecv requires)");
    if (op.peer == targets.back().rank) self.push_back(i);
  }
  match_self(ops, self);
  std::vector<Work> works;
  works.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const P2POp& op = ops[i];
    core::BackendImpl& backend = *targets[i].backend;
    if (op.peer == targets[i].rank) works.emplace_back();  // copied above: complete
    else if (op.kind == P2POp::Kind::isend)
      works.push_back(detail::track_unwaited_send(backend.send(op.sent, op.peer, op.tag), op.sent));
    else
      works.push_back(
          detail::track_unwaited(core::post_recv(backend, op.received, op.peer, op.tag)));
  }
  return works;
}

}  // namespace dist
