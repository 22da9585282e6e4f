// The gloo backend: core::BackendImpl over Gloo's TCP transport, one object per rank per group.
// Collectives run gloo's algorithms (with the group's timeout) in call order through the group's
// CallQueue: an asynchronous call on its worker thread, a blocking one on the caller's; send/recv
// post unbound buffers and complete in Work::wait. Gloo failures become dist errors (errors.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/backend_impl.hpp"
#include "core/calls/call.hpp"
#include "core/store/store.hpp"
#include "real/gloo/call_queue.hpp"
#include "real/gloo/errors.hpp"

namespace gloo {
class Context;
namespace transport {
class Device;
}
}  // namespace gloo

namespace dist::real {

namespace gloo_p2p {
class RecvOrder;
class P2PWork;
}  // namespace gloo_p2p
class GlooGiveUp;

// What a rank needs to join a gloo group.
struct GlooGroupSpec {
  std::shared_ptr<core::Store> store;  // the job's store
  std::string prefix;                  // unique per group: its keys live under it
  std::shared_ptr<::gloo::transport::Device> device;
  std::vector<int> global_ranks;  // the members' world ranks, in group order
  int rank = 0;                   // the caller's rank in the group
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
};

class GlooBackend final : public core::BackendImpl {
 public:
  // Rendezvous with the other members through the store, then connects the full mesh.
  explicit GlooBackend(GlooGroupSpec spec);
  ~GlooBackend() override;

  dist::Backend kind() const override { return dist::Backend::gloo; }
  int rank() const override { return spec_.rank; }
  int size() const override { return static_cast<int>(spec_.global_ranks.size()); }
  // The group's Gloo context (the benchmarks time Gloo's own calls on it, without our layer).
  const std::shared_ptr<::gloo::Context>& gloo_context() const { return context_; }

  Work all_reduce(core::Buf data, ReduceOp op) override;
  Work broadcast(core::Buf data, int root) override;
  Work all_gather(core::Buf output, core::ConstBuf input) override;
  Work send(core::ConstBuf data, int dst, int tag) override;
  Work recv(core::Buf data, int src, int tag) override;
  bool receives_from_any_source() const override { return true; }
  Work barrier() override;
  std::shared_ptr<core::BackendImpl> split(const std::vector<int>& ranks) override;
  // dist::abort: the group's calls not yet started fail, its connections close (so a running
  // call's Work raises Aborted at once and peers waiting on this rank lose it), and it takes no
  // call again (queued_work.hpp: GlooGiveUp::abort). shrink_group connects the survivors anew.
  std::string recovery_refusal() const override { return {}; }
  void abort(const std::exception_ptr& why) override;

  // The recv of a send's ack (the receiver's count and dtype), posted early (p2p.cpp).
  struct PostedAck;

  Work reduce(core::Buf data, ReduceOp op, int root) override;
  Work gather(core::Buf output, core::ConstBuf input, int root) override;
  Work scatter(core::Buf output, core::ConstBuf input, int root) override;
  Work all_to_all(core::Buf output, core::ConstBuf input) override;
  Work all_gather_v(core::Buf output, core::ConstBuf input,
                    std::span<const std::size_t> counts) override;

 private:
  // Queues one collective: assigns its sequence number (in its gloo tag, with a hash of the call);
  // `body(tag)` runs it, its gloo errors mapped to dist's.
  Work collective(const core::CallDesc& call, std::function<void(std::uint32_t tag)> body);
  std::shared_ptr<PostedAck> post_ack(int dst, std::uint64_t slot);

  GlooGroupSpec spec_;
  std::shared_ptr<::gloo::Context> context_;
  std::shared_ptr<ErrorMapper> errors_;  // shared with pending p2p works
  std::uint32_t sequence_ = 0;
  std::shared_ptr<CallQueue> queue_;     // the collectives, in call order
  std::shared_ptr<GlooGiveUp> give_up_;  // what a collective's Work does at its own timeout
  int splits_ = 0;
  // send and recv post from the caller's thread and from the worker (a composed all_to_all_v).
  std::mutex p2p_mutex_;
  std::map<std::pair<int, int>, std::uint32_t> sends_;  // (peer, tag) -> messages so far
  // The order receives are posted in, a receive from any_source among them (p2p_recv.hpp).
  std::shared_ptr<gloo_p2p::RecvOrder> recv_order_;
  // (peer, tag) -> the recv of the next send's ack, posted with the previous send so that a
  // receiver that is ready first answers at once and the send's wait() does not wait for it.
  std::map<std::pair<int, int>, std::shared_ptr<PostedAck>> next_acks_;
  // The send and recv Works given out (under p2p_mutex_), so dist::abort wakes their waits.
  void track(const std::shared_ptr<gloo_p2p::P2PWork>& work);
  std::vector<std::weak_ptr<gloo_p2p::P2PWork>> p2p_works_;
  std::size_t p2p_works_live_ = 0;
};

}  // namespace dist::real
