// GlooBackend's collectives: each one is a gloo algorithm with our reduction functions, the
// group's timeout and a per-group sequence number as its tag, queued in the group's CallQueue
// (it captures the call's arguments by value: an asynchronous call runs after this returns).
#include "real/gloo/backend.hpp"

#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/scatter.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/group_text.hpp"
#include "core/host_reduce.hpp"
#include "core/work_state.hpp"
#include "real/gloo/connect.hpp"
#include "real/gloo/p2p_recv.hpp"
#include "real/gloo/queued_work.hpp"

namespace dist::real {

using core::CallDesc;
using core::CallKind;
using core::make_call;

namespace {
template <class T> T* typed(const core::Buf& b) { return static_cast<T*>(b.data); }
template <class T>
T* typed(const core::ConstBuf& b) {
  return static_cast<T*>(core::engine_reads(b));
}

// The gloo tag of collective `sequence`: its low 16 bits under a 15-bit hash of the call (kind,
// dtype, count, root, op). Ranks that disagree on the call post different slots, so they time out
// instead of exchanging mismatched bytes (which aborts gloo's transport) or reducing garbage.
std::uint32_t call_tag(const CallDesc& f, std::uint32_t sequence) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the fields
  for (const std::uint64_t v : {std::uint64_t{static_cast<std::uint8_t>(f.kind)},
                                std::uint64_t{static_cast<std::uint8_t>(f.dtype)}, f.count,
                                static_cast<std::uint64_t>(f.root_or_peer),
                                std::uint64_t{static_cast<std::uint8_t>(f.op)}}) {
    h = (h ^ v) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return (static_cast<std::uint32_t>(h) & 0x7FFFu) << 16 | (sequence & 0xFFFFu);
}

}  // namespace

GlooBackend::GlooBackend(GlooGroupSpec spec)
    : spec_(std::move(spec)),
      errors_(std::make_shared<ErrorMapper>(
          spec_.global_ranks, spec_.global_ranks[static_cast<std::size_t>(spec_.rank)],
          spec_.timeout, spec_.store, spec_.prefix)) {
  try {
    context_ = connect_group(spec_, *errors_);
    recv_order_ = std::make_shared<gloo_p2p::RecvOrder>(spec_.rank, size());
    queue_ = std::make_shared<CallQueue>();
    give_up_ = std::make_shared<GlooGiveUp>(
        queue_, context_, spec_.store, spec_.prefix,
        spec_.global_ranks[static_cast<std::size_t>(spec_.rank)], errors_->group_text());
  } catch (...) {
    errors_->rethrow_current("rendezvous");
  }
}

GlooBackend::~GlooBackend() {
  if (!context_) return;
  queue_->drain();            // its calls end first: they use this backend
  errors_->record_leaving();  // before the connections close
}

Work GlooBackend::collective(const CallDesc& c, std::function<void(std::uint32_t)> body) {
  const std::uint32_t sequence = ++sequence_;
  std::string name(core::to_string(c.kind));
  // Once gloo's call has begun, the call needs nothing of this backend (a call given up stays in
  // gloo until the group's timeout, perhaps after the backend is gone).
  auto run = [queue = queue_.get(), errors = errors_, give_up = give_up_, context = context_, name,
              sequence, tag = call_tag(c, sequence), body = std::move(body)] {
    try {
      body(tag);
    } catch (...) {
      // Named without gloo's sequence number: the call layer puts the user's in front.
      if (auto closed = queue->closed()) std::rethrow_exception(closed);
      give_up->throw_if_given_up("gloo " + name + " on the " + errors->group_text(), sequence);
      errors->rethrow_current(name, -1, context.get());
    }
  };
  auto call = queue_->push(sequence, std::move(name), std::move(run));
  return Work(std::make_shared<QueuedWork>(queue_, std::move(call), give_up_));
}

Work GlooBackend::all_reduce(core::Buf data, ReduceOp op) {
  return collective(make_call(CallKind::all_reduce, data.dtype, data.count, -1, op),
                    [=, this](std::uint32_t tag) {
    if (data.count == 0) return;
    core::with_element_type(data.dtype, [&]<class T>(std::type_identity<T>) {
      ::gloo::AllreduceOptions opts(context_);
      opts.setOutput(typed<T>(data), data.count);
      opts.setReduceFunction(give_up_->fenced(core::reduce_step(data.dtype, op)));
      opts.setTag(tag);
      opts.setTimeout(spec_.timeout);
      ::gloo::allreduce(opts);
    });
    if (op == ReduceOp::mean)
      give_up_->unless_given_up(
          [&] { core::finish_mean(data.data, data.count, data.dtype, size()); });
  });
}

Work GlooBackend::broadcast(core::Buf data, int root) {
  return collective(make_call(CallKind::broadcast, data.dtype, data.count, root),
                    [=, this](std::uint32_t tag) {
    if (data.count == 0) return;
    core::with_element_type(data.dtype, [&]<class T>(std::type_identity<T>) {
      ::gloo::BroadcastOptions opts(context_);
      opts.setOutput(typed<T>(data), data.count);
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(spec_.timeout);
      ::gloo::broadcast(opts);
    });
  });
}

Work GlooBackend::reduce(core::Buf data, ReduceOp op, int root) {
  return collective(make_call(CallKind::reduce, data.dtype, data.count, root, op),
                    [=, this](std::uint32_t tag) {
    if (data.count == 0) return;
    // gloo reduces in place and leaves partial results on other ranks: they reduce a copy.
    std::vector<std::byte> scratch;
    core::Buf target = data;
    if (rank() != root) {
      scratch.assign(static_cast<const std::byte*>(data.data),
                     static_cast<const std::byte*>(data.data) + data.bytes());
      target.data = scratch.data();
    }
    core::with_element_type(data.dtype, [&]<class T>(std::type_identity<T>) {
      ::gloo::ReduceOptions opts(context_);
      opts.setOutput(typed<T>(target), target.count);
      opts.setRoot(root);
      opts.setReduceFunction(give_up_->fenced(core::reduce_step(data.dtype, op)));
      opts.setTag(tag);
      opts.setTimeout(spec_.timeout);
      ::gloo::reduce(opts);
    });
    if (op == ReduceOp::mean && rank() == root)
      give_up_->unless_given_up(
          [&] { core::finish_mean(data.data, data.count, data.dtype, size()); });
  });
}

Work GlooBackend::all_gather(core::Buf output, core::ConstBuf input) {
  return collective(make_call(CallKind::all_gather, input.dtype, input.count),
                    [=, this](std::uint32_t tag) {
    if (input.count == 0) return;
    core::with_element_type(input.dtype, [&]<class T>(std::type_identity<T>) {
      ::gloo::AllgatherOptions opts(context_);
      opts.setInput(typed<T>(input), input.count);
      opts.setOutput(typed<T>(output), output.count);
      opts.setTag(tag);
      opts.setTimeout(spec_.timeout);
      ::gloo::allgather(opts);
    });
  });
}

Work GlooBackend::all_gather_v(core::Buf output, core::ConstBuf input,
                               std::span<const std::size_t> counts_of) {
  std::vector<std::size_t> counts(counts_of.begin(), counts_of.end());
  return collective(make_call(CallKind::all_gather_v, input.dtype, output.count),
                    [=, this](std::uint32_t tag) {
    if (output.count == 0) return;
    core::with_element_type(input.dtype, [&]<class T>(std::type_identity<T>) {
      T dummy{};  // gloo wants a pointer even for an empty contribution
      ::gloo::AllgathervOptions opts(context_);
      opts.setInput(input.count ? typed<T>(input) : &dummy, input.count);
      opts.setOutput(typed<T>(output), counts);
      opts.setTag(tag);
      opts.setTimeout(spec_.timeout);
      ::gloo::allgatherv(opts);
    });
  });
}

Work GlooBackend::gather(core::Buf output, core::ConstBuf input, int root) {
  return collective(make_call(CallKind::gather, input.dtype, input.count, root),
                    [=, this](std::uint32_t tag) {
    if (input.count == 0) return;
    core::with_element_type(input.dtype, [&]<class T>(std::type_identity<T>) {
      ::gloo::GatherOptions opts(context_);
      opts.setInput(typed<T>(input), input.count);
      if (rank() == root) opts.setOutput(typed<T>(output), output.count);
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(spec_.timeout);
      ::gloo::gather(opts);
    });
  });
}

Work GlooBackend::scatter(core::Buf output, core::ConstBuf input, int root) {
  return collective(make_call(CallKind::scatter, output.dtype, output.count, root),
                    [=, this](std::uint32_t tag) {
    if (output.count == 0) return;
    core::with_element_type(output.dtype, [&]<class T>(std::type_identity<T>) {
      ::gloo::ScatterOptions opts(context_);
      if (rank() == root) {
        std::vector<T*> parts;
        for (int r = 0; r < size(); ++r)
          parts.push_back(typed<T>(input) + output.count * static_cast<std::size_t>(r));
        opts.setInputs(parts, output.count);
      }
      opts.setOutput(typed<T>(output), output.count);
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(spec_.timeout);
      ::gloo::scatter(opts);
    });
  });
}

Work GlooBackend::all_to_all(core::Buf output, core::ConstBuf input) {
  return collective(make_call(CallKind::all_to_all, input.dtype, input.count),
                    [=, this](std::uint32_t tag) {
    if (input.count == 0) return;
    core::with_element_type(input.dtype, [&]<class T>(std::type_identity<T>) {
      ::gloo::AlltoallOptions opts(context_);
      opts.setInput(typed<T>(input), input.count);
      opts.setOutput(typed<T>(output), output.count);
      opts.setTag(tag);
      opts.setTimeout(spec_.timeout);
      ::gloo::alltoall(opts);
    });
  });
}

Work GlooBackend::barrier() {
  return collective(make_call(CallKind::barrier), [=, this](std::uint32_t tag) {
    ::gloo::BarrierOptions opts(context_);
    opts.setTag(tag);
    opts.setTimeout(spec_.timeout);
    ::gloo::barrier(opts);
  });
}

void GlooBackend::abort(const std::exception_ptr& why) {
  errors_->set_aborted(why);  // before anything stops: a pending send or recv says why
  {
    std::lock_guard lock(p2p_mutex_);
    for (const auto& w : p2p_works_)
      if (const auto work = w.lock()) work->abort_wait();
  }
  give_up_->abort(why);
}

std::shared_ptr<core::BackendImpl> GlooBackend::split(const std::vector<int>& ranks) {
  const int index = ++splits_;
  const auto it = std::find(ranks.begin(), ranks.end(), rank());
  if (it == ranks.end()) return nullptr;
  GlooGroupSpec child;
  child.store = spec_.store;
  child.prefix = spec_.prefix + "/group" + std::to_string(index);
  child.device = spec_.device;
  for (const int r : ranks) child.global_ranks.push_back(spec_.global_ranks[static_cast<std::size_t>(r)]);
  child.rank = static_cast<int>(it - ranks.begin());
  child.timeout = spec_.timeout;
  return std::make_shared<GlooBackend>(std::move(child));
}

}  // namespace dist::real
